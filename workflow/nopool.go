package workflow

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// noPoolDB is the database of the feature handles (Deployments, Events,
// ...) on an engine without a pool: it has a pool's methods, and every call
// fails with errNoPool. It is the one no-pool guard: a handle is built on
// e.db() and needs no check of its own.
type noPoolDB struct{}

func (noPoolDB) Begin(context.Context) (pgx.Tx, error) { return nil, errNoPool }
func (noPoolDB) BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error) {
	return nil, errNoPool
}
func (noPoolDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errNoPool
}
func (noPoolDB) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errNoPool
}
func (noPoolDB) QueryRow(context.Context, string, ...any) pgx.Row { return errRow{errNoPool} }
func (noPoolDB) Acquire(context.Context) (*pgxpool.Conn, error)   { return nil, errNoPool }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// poolDB is the engine's pool as the feature handles' database: the pool,
// or noPoolDB on an engine without one.
type poolDB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Acquire(ctx context.Context) (*pgxpool.Conn, error)
}

// db is the database the engine's feature handles are built on.
func (e *Engine) db() poolDB {
	if e.dbPool == nil {
		return noPoolDB{}
	}
	return e.dbPool
}
