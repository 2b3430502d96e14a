// Package sqltemplate reads the .sql files embedded in riverbpmn's packages
// and fills the markers they contain. It imports no other riverbpmn package,
// so every feature package may use it.
package sqltemplate

import (
	"embed"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SchemaMarker is River's own schema marker. Render replaces it by the quoted
// schema and a dot, or by nothing for the connection's search_path.
const SchemaMarker = "/* TEMPLATE: schema */"

// MustRead returns the text of the embedded file name (a path inside fsys,
// e.g. "sql/add.sql"). The files are part of the binary, so a missing one is a
// programming error caught by any test: MustRead panics.
func MustRead(fsys embed.FS, name string) string {
	b, err := fsys.ReadFile(name)
	if err != nil {
		panic("sqltemplate: missing embedded SQL file " + name + ": " + err.Error())
	}
	return string(b)
}

// Render fills SchemaMarker in tmpl with the quoted schema and a dot (nothing
// when schema is empty), and each further marker of markerValues, given as
// pairs of marker and value, with its value. An odd number of markerValues
// panics, as strings.NewReplacer does.
func Render(tmpl, schema string, markerValues ...string) string {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	if len(markerValues) == 0 {
		return strings.ReplaceAll(tmpl, SchemaMarker, prefix)
	}
	return strings.NewReplacer(append([]string{SchemaMarker, prefix}, markerValues...)...).Replace(tmpl)
}
