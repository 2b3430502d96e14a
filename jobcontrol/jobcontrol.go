package jobcontrol

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/internal/notfound"
)

// DB is what the package needs from a database handle; *pgxpool.Pool and
// pgx.Tx have it.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrNotFound is returned for a job id that names no job. It is the same
// error as every other package's ErrNotFound (workflow.ErrNotFound too).
var ErrNotFound = notfound.Err

//go:embed sql/*.sql
var sqlFS embed.FS
