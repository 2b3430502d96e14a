package workflow

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// onDemandIndexes is a family of indexes on river_job that no migration
// creates: one per acquisition order, created (CREATE INDEX CONCURRENTLY)
// when a client that reads one starts, or by an operator, so that a database
// whose clients never fetch that way pays nothing for them on insert. Two
// families exist: the fetch-order indexes (fetch_index_*.sql) and the
// tenant indexes of fair fetching (fairness_index_*.sql).
type onDemandIndexes struct {
	what   string            // for errors, such as "tenant fairness index"
	names  []string          // every index of the family
	create map[string]string // name -> CREATE INDEX CONCURRENTLY IF NOT EXISTS
	drop   map[string]string // name -> DROP INDEX CONCURRENTLY IF EXISTS
}

var (
	// indexValidSQL lists which of a family's indexes exist and are valid.
	indexValidSQL = mustReadSQL("index_valid.sql")
	// indexLockSQL and indexUnlockSQL serialize builds across clients.
	indexLockSQL   = mustReadSQL("index_lock.sql")
	indexUnlockSQL = mustReadSQL("index_unlock.sql")
)

// indexLockPoll is how often a client waiting for another client's index
// build tries the lock again.
const indexLockPoll = 50 * time.Millisecond

// indexQuerier is the part of a pool or connection the family uses.
type indexQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// newOnDemandIndexes reads a family from its create and drop files (one
// statement per index, blank-line separated; ref finds the index a
// statement names). Every index must have exactly one statement in each: a
// missing or repeated one is a bug in the files, found when the package
// loads.
func newOnDemandIndexes(what string, names []string, ref *regexp.Regexp, createFile, dropFile string) *onDemandIndexes {
	return &onDemandIndexes{
		what:   what,
		names:  names,
		create: indexStatements(what, names, ref, mustReadSQL(createFile)),
		drop:   indexStatements(what, names, ref, mustReadSQL(dropFile)),
	}
}

// indexStatements splits file into the statement of each index of names.
func indexStatements(what string, names []string, ref *regexp.Regexp, file string) map[string]string {
	statements := map[string]string{}
	for _, stmt := range strings.Split(file, ";\n\n") {
		code := sqlWithoutComments(stmt)
		if strings.TrimSpace(code) == "" {
			continue
		}
		name := ref.FindString(code)
		if _, dup := statements[name]; dup || !slices.Contains(names, name) {
			panic(fmt.Sprintf("workflow: %s statement names %q, not one new %s:\n%s", what, name, what, code))
		}
		statements[name] = code
	}
	if len(statements) != len(names) {
		panic(fmt.Sprintf("workflow: %d %s statements, want one for each of %q", len(statements), what, names))
	}
	return statements
}

// valid returns the names of the family's indexes that exist and are valid
// in the engine's schema, sorted (none: nil).
func (s *onDemandIndexes) valid(ctx context.Context, e *Engine) ([]string, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return s.validOn(ctx, e.dbPool, e.config.Schema)
}

func (s *onDemandIndexes) validOn(ctx context.Context, q indexQuerier, schema string) ([]string, error) {
	rows, err := q.Query(ctx, indexValidSQL, schema, s.names)
	if err != nil {
		return nil, fmt.Errorf("workflow: %ses: %w", s.what, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("workflow: %ses: %w", s.what, err)
	}
	return names, nil
}

// enable creates the named indexes that are not there and valid, on one
// connection holding the schema's index lock (index_lock.sql), so that
// clients starting together build each index once. An index left invalid
// by an interrupted concurrent build (which IF NOT EXISTS would keep) is
// dropped and built again.
func (s *onDemandIndexes) enable(ctx context.Context, e *Engine, names []string) error {
	if e.dbPool == nil {
		return errNoPool
	}
	if len(names) == 0 {
		return nil
	}
	conn, err := e.dbPool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("workflow: %s: %w", s.what, err)
	}
	defer conn.Release()
	schema := e.config.Schema
	for locked := false; !locked; {
		if err := conn.QueryRow(ctx, indexLockSQL, schema).Scan(&locked); err != nil {
			return fmt.Errorf("workflow: %s: %w", s.what, err)
		}
		if !locked {
			select {
			case <-ctx.Done():
				return fmt.Errorf("workflow: %s: waiting for another client's build: %w", s.what, ctx.Err())
			case <-time.After(indexLockPoll):
			}
		}
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), indexUnlockSQL, schema); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing drops the lock
		}
	}()
	valid, err := s.validOn(ctx, conn, schema)
	if err != nil {
		return err
	}
	for _, name := range names {
		if slices.Contains(valid, name) {
			continue
		}
		if err := s.exec(ctx, conn, e, s.drop[name]); err != nil {
			return err
		}
		if err := s.exec(ctx, conn, e, s.create[name]); err != nil {
			return err
		}
		valid = append(valid, name)
	}
	return nil
}

// disable drops every index of the family (concurrently).
func (s *onDemandIndexes) disable(ctx context.Context, e *Engine) error {
	if e.dbPool == nil {
		return errNoPool
	}
	for _, name := range s.names {
		if err := s.exec(ctx, e.dbPool, e, s.drop[name]); err != nil {
			return err
		}
	}
	return nil
}

// exec runs one statement of the family's files (CREATE/DROP INDEX
// CONCURRENTLY refuse to run in a transaction, which a multi-statement
// string is).
func (s *onDemandIndexes) exec(ctx context.Context, q indexQuerier, e *Engine, stmt string) error {
	if _, err := q.Exec(ctx, e.sql(stmt)); err != nil {
		return fmt.Errorf("workflow: %s: %w", s.what, err)
	}
	return nil
}

// sqlWithoutComments drops the "--" comment lines of stmt.
func sqlWithoutComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// orderIndexSuffixes are the acquisition orders an on-demand index can
// have, as the suffixes of their names: p ByPriority, t TimersFirst, d
// ByDueDate (the precedence of the order keys); "" is River's order.
var orderIndexSuffixes = []string{"", "p", "t", "d", "pt", "pd", "td", "ptd"}

// orderSuffix is the suffix of the order acq fetches in (orderIndexSuffixes).
func orderSuffix(acq Acquisition) string {
	suffix := ""
	if acq.ByPriority {
		suffix += "p"
	}
	if acq.TimersFirst {
		suffix += "t"
	}
	if acq.ByDueDate {
		suffix += "d"
	}
	return suffix
}
