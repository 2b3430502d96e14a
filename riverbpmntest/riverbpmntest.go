package riverbpmntest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// Driver returns a riverbpmn driver on the test database for
// riverdbtest.TestSchema, riverdbtest.TestTx and riverdbtest.TestTxPgxDriver:
// with it they apply both migration lines. It comes from an engine with the
// zero configuration, which needs no schema, so a test can make its schema
// before its own engine.
func Driver(tb testutil.TestingTB) *workflow.Driver {
	tb.Helper()
	engine, err := workflow.NewEngine(DBPool(tb), nil)
	if err != nil { // the zero configuration is valid
		fatal(tb, err)
	}
	return engine.Driver()
}

// DBPool returns the shared pool of the test database: River's
// riversharedtest.DBPool (TEST_DATABASE_URL) for a *testing.T or another
// testing.TB, and a pool of the same database for other TBs (such as
// testutil.PanicTB in an Example). Its search_path is empty, as that of
// River's test pool, so every query names its schema.
func DBPool(tb testutil.TestingTB) *pgxpool.Pool {
	tb.Helper()
	if t, ok := tb.(testing.TB); ok {
		return riversharedtest.DBPool(context.Background(), t)
	}
	examplePoolOnce.Do(func() {
		config, err := pgxpool.ParseConfig(riversharedtest.TestDatabaseURL())
		if err != nil {
			examplePoolErr = err
			return
		}
		config.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "SET search_path TO ''")
			return err
		}
		examplePool, examplePoolErr = pgxpool.NewWithConfig(context.Background(), config)
	})
	if examplePoolErr != nil {
		tb.Errorf("riverbpmntest: the test database: %v", examplePoolErr)
		tb.FailNow()
	}
	return examplePool
}

// The pool of DBPool for a TB that is not a testing.TB.
var (
	examplePoolOnce sync.Once
	examplePool     *pgxpool.Pool
	examplePoolErr  error
)

// fatal fails tb with err, as t.Fatalf does.
func fatal(tb testutil.TestingTB, err error) {
	tb.Helper()
	tb.Errorf("riverbpmntest: %v", err)
	tb.FailNow()
}

// Opts are the options of New. The zero value (or nil) gives an engine with
// the zero configuration and an insert-only client.
type Opts struct {
	// Config is the engine's configuration: declarations, exclusive scope,
	// liveness and the rest. New copies it and sets its Schema to the test
	// schema. Nil is the zero configuration.
	Config *workflow.Config

	// ClientConfig is the client's River configuration (queues, workers,
	// subscriptions...). New copies it and sets its Schema to the test schema.
	// Nil gives an insert-only client (river.Config{TestOnly: true}), enough
	// for rivertest's Require helpers and for management calls.
	ClientConfig *river.Config
}

// Bundle is what New gives a test.
type Bundle struct {
	// DBPool is the shared pool of the test database.
	DBPool *pgxpool.Pool

	// Schema is the test schema the engine and client work in.
	Schema string

	// Engine is the engine on Schema, configured by Opts.Config.
	Engine *workflow.Engine

	// Client is a River client built with workflow.NewClient on Engine. New
	// does not start it; when the test starts it, it is stopped when the
	// test ends.
	Client *river.Client[pgx.Tx]
}

// New returns an engine and a client on schema, a schema that the test's
// riverdbtest.TestSchema call made on Driver (see the package
// documentation). When tb has a Cleanup method (*testing.T does), a client
// the test starts is stopped when the test ends (within 10 seconds, then
// cancelled), before riverdbtest checks the schema back in. New fails the
// test when schema is empty or when the configuration is refused
// (workflow.NewEngine's and workflow.NewClient's errors).
func New(ctx context.Context, tb testutil.TestingTB, schema string, opts *Opts) *Bundle {
	tb.Helper()
	bundle, err := newBundle(tb, schema, opts)
	if err != nil {
		fatal(tb, err)
		return nil
	}
	withCleanup, ok := tb.(interface{ Cleanup(func()) })
	if !ok {
		return bundle
	}
	withCleanup.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := bundle.Client.Stop(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			tb.Errorf("riverbpmntest: stopping the client: %v", err)
		}
	})
	return bundle
}

func newBundle(tb testutil.TestingTB, schema string, opts *Opts) (*Bundle, error) {
	if schema == "" {
		return nil, errors.New("New: schema is empty; pass the schema of riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)")
	}
	if opts == nil {
		opts = &Opts{}
	}
	config := workflow.Config{}
	if opts.Config != nil {
		config = *opts.Config
	}
	config.Schema = schema
	clientConfig := river.Config{TestOnly: true}
	if opts.ClientConfig != nil {
		clientConfig = *opts.ClientConfig
	}
	clientConfig.Schema = schema
	pool := DBPool(tb)
	engine, err := workflow.NewEngine(pool, &config)
	if err != nil {
		return nil, err
	}
	client, err := workflow.NewClient(engine, &clientConfig)
	if err != nil {
		return nil, err
	}
	return &Bundle{DBPool: pool, Schema: schema, Engine: engine, Client: client}, nil
}
