// Package insertcalls lists River's six insert calls (Insert, InsertTx,
// InsertMany, InsertManyTx, InsertManyFast, InsertManyFastTx) as one
// signature, for tests that must show a behaviour holds for jobs inserted
// by each of them. It imports only River and pgx, so the internal tests of
// package workflow can use it too.
package insertcalls

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Call is one of River's insert calls, inserting the jobs built by args
// with options opts (opts[i] for args[i]); the Tx calls run in a
// transaction of their own, committed when the insert succeeds.
type Call struct {
	Name   string
	Insert func(ctx context.Context, client *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error
}

// Six are River's six insert calls.
var Six = []Call{
	{"Insert", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		for i := range args {
			if _, err := c.Insert(ctx, args[i], opts[i]); err != nil {
				return err
			}
		}
		return nil
	}},
	{"InsertTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return inTx(ctx, c, func(tx pgx.Tx) error {
			for i := range args {
				if _, err := c.InsertTx(ctx, tx, args[i], opts[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{"InsertMany", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		_, err := c.InsertMany(ctx, manyParams(args, opts))
		return err
	}},
	{"InsertManyTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return inTx(ctx, c, func(tx pgx.Tx) error {
			_, err := c.InsertManyTx(ctx, tx, manyParams(args, opts))
			return err
		})
	}},
	{"InsertManyFast", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		_, err := c.InsertManyFast(ctx, manyParams(args, opts))
		return err
	}},
	{"InsertManyFastTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return inTx(ctx, c, func(tx pgx.Tx) error {
			_, err := c.InsertManyFastTx(ctx, tx, manyParams(args, opts))
			return err
		})
	}},
}

// manyParams pairs args with opts for the InsertMany calls.
func manyParams(args []river.JobArgs, opts []*river.InsertOpts) []river.InsertManyParams {
	params := make([]river.InsertManyParams, len(args))
	for i := range args {
		params[i] = river.InsertManyParams{Args: args[i], InsertOpts: opts[i]}
	}
	return params
}

// inTx runs fn in a new transaction of the client's driver, committed when
// fn succeeds and rolled back otherwise.
func inTx(ctx context.Context, client *river.Client[pgx.Tx], fn func(tx pgx.Tx) error) error {
	tx, err := client.Driver().GetExecutor().Begin(ctx)
	if err != nil {
		return err
	}
	pgxTx := client.Driver().UnwrapTx(tx)
	if err := fn(pgxTx); err != nil {
		_ = pgxTx.Rollback(ctx)
		return err
	}
	return pgxTx.Commit(ctx)
}
