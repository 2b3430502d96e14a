package exclusive

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// mustReadSQL returns the text of an embedded sql/ file.
func mustReadSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

// DB is what the package needs of a database: a pgx pool, connection or
// transaction (*pgxpool.Pool, *pgx.Conn and pgx.Tx all have these methods).
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
