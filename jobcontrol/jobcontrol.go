package jobcontrol

import (
	"context"
	"embed"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is what the package needs from a database handle; *pgxpool.Pool and
// pgx.Tx have it.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrNotFound is returned for a job id that names no job.
var ErrNotFound = errors.New("not found")

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string {
	b, err := sqlFS.ReadFile("sql/" + name)
	if err != nil {
		panic("jobcontrol: missing embedded SQL file " + name)
	}
	return string(b)
}

// render fills River's schema marker: the quoted schema and a dot, or nothing
// for the connection's search_path.
func render(sql, schema string) string {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	return strings.ReplaceAll(sql, "/* TEMPLATE: schema */", prefix)
}
