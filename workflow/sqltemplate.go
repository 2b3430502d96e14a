package workflow

import (
	"embed"

	"github.com/riverbpmn/riverbpmn/internal/jobrow"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// mustReadSQL returns the text of an embedded sql/ file. The files are part of
// the binary, so a missing one is a programming error caught by any test.
func mustReadSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

const (
	schemaMarker     = sqltemplate.SchemaMarker
	jobColumnsMarker = jobrow.ColumnsMarker
)

// renderSQL fills the two markers our .sql files use: River's own schema
// marker (replaced by the quoted schema and a dot, or nothing for the
// connection's search_path) and the river_job column list scanJobRow expects.
func renderSQL(tmpl, schema string) string {
	return sqltemplate.Render(tmpl, schema, jobColumnsMarker, qualifiedJobRowColumns("river_job"))
}
