package jobcontrol

import (
	"context"
	"embed"
	"errors"

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
