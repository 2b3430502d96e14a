package liveness

import (
	"embed"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustReadSQL(name string) string {
	b, err := sqlFS.ReadFile("sql/" + name)
	if err != nil {
		panic("liveness: missing embedded SQL file " + name + ": " + err.Error())
	}
	return string(b)
}

var (
	sessionOpenSQL     = mustReadSQL("session_open.sql")
	sessionObserveSQL  = mustReadSQL("session_observe.sql")
	sessionCloseSQL    = mustReadSQL("session_close.sql")
	sessionEvictSQL    = mustReadSQL("session_evict.sql")
	sessionsDueSQL     = mustReadSQL("sessions_due.sql")
	sessionTakeoverSQL = mustReadSQL("session_takeover.sql")
)

// render fills River's schema marker: the quoted schema and a dot, or nothing
// for the connection's search_path.
func render(tmpl, schema string) string {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	return strings.ReplaceAll(tmpl, "/* TEMPLATE: schema */", prefix)
}
