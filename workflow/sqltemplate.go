package workflow

import (
	"embed"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// mustReadSQL returns the text of an embedded sql/ file. The files are part of
// the binary, so a missing one is a programming error caught by any test.
func mustReadSQL(name string) string {
	b, err := sqlFS.ReadFile("sql/" + name)
	if err != nil {
		panic("workflow: missing embedded SQL file " + name + ": " + err.Error())
	}
	return string(b)
}

const (
	schemaMarker     = "/* TEMPLATE: schema */"
	jobColumnsMarker = "/* COLUMNS: river_job */"
)

// renderSQL fills the two markers our .sql files use: River's own schema
// marker (replaced by the quoted schema and a dot, or nothing for the
// connection's search_path) and the river_job column list scanJobRow expects.
func renderSQL(tmpl, schema string) string {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	return strings.NewReplacer(
		schemaMarker, prefix,
		jobColumnsMarker, qualifiedJobRowColumns("river_job"),
	).Replace(tmpl)
}
