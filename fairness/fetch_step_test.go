package fairness_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// fairCollationTenants are tenant names whose order differs between byte
// order (collation "C") and a linguistic collation: upper case before lower
// case in bytes, not in en-US; "_" and "Ä" move too.
var fairCollationTenants = map[string]int{"a": 2, "B": 1, "c": 3, "_d": 1, "Ä": 1, "": 1}

// collationDatabase is a database with a non-C default collation, created
// (once; kept for later runs) on the server of the test database.
type collationDatabase struct {
	name   string // suffix of the database name, and the subtest's name
	create string // CREATE DATABASE options after the name
}

// collationDatabases are the databases TurnsAgreeOnAnyCollation runs on:
// ICU's en-US (PostgreSQL 15 and later, built with ICU) and libc's
// en_US.UTF-8 (when the server's operating system has that locale).
var collationDatabases = []collationDatabase{
	{name: "icu_en_us", create: "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"},
	{name: "libc_en_us", create: "TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'"},
}

// collationPool returns a pool to the database db (created if missing) on
// the server of the test database, or skips the test when the server
// cannot create it (no ICU, no such locale), saying why.
func collationPool(ctx context.Context, t *testing.T, db collationDatabase) *pgxpool.Pool {
	t.Helper()
	admin := riverbpmntest.DBPool(t)
	var base string
	require.NoError(t, admin.QueryRow(ctx, "SELECT current_database()").Scan(&base))
	name := base + "_" + db.name
	var exists bool
	require.NoError(t, admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists))
	if !exists {
		_, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" "+db.create)
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pgErr) && pgErr.Code == "42P04": // created meanwhile by another run
		case errors.As(err, &pgErr) && (pgErr.Code == "42704" || pgErr.Code == "42809" || pgErr.Code == "22023" || pgErr.Code == "0A000" || pgErr.Code == "42601"):
			// Undefined object or wrong object type (PostgreSQL's codes for
			// an invalid locale name), invalid parameter, feature not
			// supported (no ICU), syntax (a server before 15).
			t.Skipf("this server cannot create a database %s: %v", db.create, err)
		default:
			require.NoError(t, err)
		}
	}
	config := admin.Config().Copy()
	config.ConnConfig.Database = name
	config.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// TestFetchStep: the fair step of the fetch query (FetchStepSQL, Part), as
// a fair client's fetches run it.
func TestFetchStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// TurnsAgreeOnAnyCollation: on databases whose default collation is not
	// "C" (ICU en-US; libc en_US.UTF-8 when available), where the tenants'
	// names sort otherwise than in bytes (checked first, so the test would
	// catch a turn decided in the database's collation), a fair client's
	// fetches follow the rounds exactly: every tenant backlogged, weights
	// 2, 1, 3, 1, 1 and 1 (jobs of no tenant included), each fetch of n jobs
	// takes the next n slots of the schedule "each round, each tenant in
	// byte order takes its weight", for fetch sizes 1, 2, 3 and 7 over ten
	// rounds, without and with exclusivity.
	t.Run("TurnsAgreeOnAnyCollation", func(t *testing.T) {
		t.Parallel()
		byBytes := make([]string, 0, len(fairCollationTenants))
		for tenant := range fairCollationTenants {
			byBytes = append(byBytes, tenant)
		}
		slices.Sort(byBytes)
		var schedule []string // one round
		for _, tenant := range byBytes {
			for range fairCollationTenants[tenant] {
				schedule = append(schedule, tenant)
			}
		}
		for _, db := range collationDatabases {
			t.Run(db.name, func(t *testing.T) {
				t.Parallel()
				pool := collationPool(ctx, t, db)
				rows, err := pool.Query(ctx, "SELECT name FROM unnest($1::text[]) AS name ORDER BY name", byBytes)
				require.NoError(t, err)
				byCollation, err := pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
				require.NotEqual(t, byBytes, byCollation, "the database's collation orders the tenants as bytes do: the test would prove nothing")
				t.Logf("byte order %q, the database's order %q", byBytes, byCollation)

				for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
					t.Run(scopeName(scope), func(t *testing.T) {
						schema := fmt.Sprintf("fair_collation_%d", time.Now().UnixNano())
						_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
						require.NoError(t, err)
						t.Cleanup(func() {
							_, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
							require.NoError(t, err)
						})
						_, err = workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema})
						require.NoError(t, err)
						config := fetchConfig(scope)
						config.Schema = schema
						engine, err := workflow.NewEngine(pool, config)
						require.NoError(t, err)
						acq := workflow.Acquisition{FairByTenant: true, TenantWeights: fairCollationTenants}
						require.NoError(t, engine.EnableTenantFairness(ctx, acq))
						for _, n := range []int{1, 2, 3, 7} {
							queue := fmt.Sprintf("collation_%d", n)
							insertFairJobs(ctx, t, pool, schema, queue, fairCollationTenants, 40)
							f := newEngineFetcher(t, engine, schema, acq)
							for slot := 0; slot < 10*len(schedule); slot += n {
								jobs := f.fetch(ctx, t, queue, n, nil)
								var got, want []string
								for _, job := range jobs {
									got = append(got, tenantOf(t, job))
								}
								for i := range n {
									want = append(want, schedule[(slot+i)%len(schedule)])
								}
								require.ElementsMatch(t, want, got, "fetch of %d at slot %d", n, slot)
								complete(ctx, t, pool, schema, jobs)
							}
						}
					})
				}
			})
		}
	})
}
