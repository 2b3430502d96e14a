// Package index manages riverbpmn's on-demand indexes on river_job: the
// indexes no migration creates, one per acquisition order (and exclusive
// scope), built with CREATE INDEX CONCURRENTLY when a client that reads one
// starts, or by an operator, so that a database whose clients never fetch
// that way pays nothing for them on insert. They come in families: the
// fetch-order indexes (FetchOrder), the tenant indexes of fair fetching
// (TenantFairness), and the exclusive head-of-key and running-key indexes
// the engine adds. The Indexes handle lists every index of its families
// with whether it exists and is valid, and enables and disables them by
// name.
package index

import (
	"context"
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	// validSQL lists which of a family's indexes exist and are valid.
	validSQL = mustSQL("valid.sql")
	// lockSQL and unlockSQL serialize builds across clients.
	lockSQL   = mustSQL("lock.sql")
	unlockSQL = mustSQL("unlock.sql")
)

// lockPoll is how often a client waiting for another client's index build
// tries the lock again.
const lockPoll = 50 * time.Millisecond

// OrderSuffixes are the acquisition orders an on-demand index can have, as
// the suffixes of their names: p by priority, t timers first, d by due date
// (the precedence of the order keys); "" is River's order.
var OrderSuffixes = []string{"", "p", "t", "d", "pt", "pd", "td", "ptd"}

// FetchOrder is the family of the fetch-order indexes: the index a client
// whose acquisition orders by priority, timers first and/or due date reads,
// river_bpmn_fetch_ and the order's suffix (none for River's order, which
// River's own index serves).
var FetchOrder = NewFamily("fetch-order", "fetch-order index", func() []string {
	var names []string
	for _, suffix := range OrderSuffixes {
		if suffix != "" {
			names = append(names, "river_bpmn_fetch_"+suffix)
		}
	}
	return names
}(), regexp.MustCompile(`\briver_bpmn_fetch_[ptd]+\b`), mustSQL("fetch_index_create.sql"), mustSQL("fetch_index_drop.sql"))

// TenantFairness is the family of the tenant indexes of fair fetching, one
// per order: river_bpmn_fetch_tenant, with "_" and the order's suffix for
// the orders but River's.
var TenantFairness = NewFamily("tenant-fairness", "tenant fairness index", func() []string {
	names := make([]string, len(OrderSuffixes))
	for i, suffix := range OrderSuffixes {
		names[i] = TenantIndexName(suffix)
	}
	return names
}(), regexp.MustCompile(`\briver_bpmn_fetch_tenant(_[ptd]+)?\b`), mustSQL("fairness_index_create.sql"), mustSQL("fairness_index_drop.sql"))

// TenantIndexName names the tenant index of the order with suffix (one of
// OrderSuffixes).
func TenantIndexName(suffix string) string {
	if suffix == "" {
		return "river_bpmn_fetch_tenant"
	}
	return "river_bpmn_fetch_tenant_" + suffix
}

// Querier is the part of a pool or connection a family uses to look and to
// drop.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// DB is what a family needs to build: a Querier that hands out a
// connection of its own (a pgxpool.Pool), which holds the schema's build
// lock.
type DB interface {
	Querier
	Acquire(ctx context.Context) (*pgxpool.Conn, error)
}

// Family is one family of on-demand indexes: their names and, for each, the
// statement that creates it and the one that drops it.
type Family struct {
	name   string
	what   string
	names  []string
	create map[string]string
	drop   map[string]string
}

// NewFamily makes a family named name (as "fetch-order"; what, such as
// "fetch-order index", names one index in errors) of the indexes names from
// the text of its create and drop files: one statement per index,
// separated by blank lines, each naming its index as ref finds it. Every
// index must have exactly one statement in each file; a missing or
// repeated one is a bug in the files, and NewFamily panics.
func NewFamily(name, what string, names []string, ref *regexp.Regexp, createSQL, dropSQL string) *Family {
	return &Family{
		name:   name,
		what:   what,
		names:  slices.Clone(names),
		create: statements(what, names, ref, createSQL),
		drop:   statements(what, names, ref, dropSQL),
	}
}

// statements splits file into the statement of each index of names.
func statements(what string, names []string, ref *regexp.Regexp, file string) map[string]string {
	out := map[string]string{}
	for _, stmt := range strings.Split(file, ";\n\n") {
		code := withoutComments(stmt)
		if strings.TrimSpace(code) == "" {
			continue
		}
		name := ref.FindString(code)
		if _, dup := out[name]; dup || !slices.Contains(names, name) {
			panic(fmt.Sprintf("index: %s statement names %q, not one new %s:\n%s", what, name, what, code))
		}
		out[name] = code
	}
	if len(out) != len(names) {
		panic(fmt.Sprintf("index: %d %s statements, want one for each of %q", len(out), what, names))
	}
	return out
}

// Name is the family's name, as List reports it.
func (f *Family) Name() string { return f.name }

// Names are the names of every index of the family.
func (f *Family) Names() []string { return slices.Clone(f.names) }

// CreateStatement is the statement that creates index name ("" when the
// family has no such index), with the schema marker unfilled.
func (f *Family) CreateStatement(name string) string { return f.create[name] }

// DropStatement is the statement that drops index name ("" when the
// family has no such index), with the schema marker unfilled.
func (f *Family) DropStatement(name string) string { return f.drop[name] }

// Valid returns the names of the family's indexes that exist and are valid
// in schema, sorted (none: nil).
func (f *Family) Valid(ctx context.Context, q Querier, schema string) ([]string, error) {
	rows, err := q.Query(ctx, validSQL, schema, f.names)
	if err != nil {
		return nil, fmt.Errorf("index: %ses: %w", f.what, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("index: %ses: %w", f.what, err)
	}
	return names, nil
}

// Enable creates the named indexes of the family that are not there and
// valid, on one connection holding the schema's index lock (lock.sql), so
// that clients starting together build each index once. An index left
// invalid by an interrupted concurrent build (which IF NOT EXISTS would
// keep) is dropped and built again.
func (f *Family) Enable(ctx context.Context, db DB, schema string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	conn, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("index: %s: %w", f.what, err)
	}
	defer conn.Release()
	for locked := false; !locked; {
		if err := conn.QueryRow(ctx, lockSQL, schema).Scan(&locked); err != nil {
			return fmt.Errorf("index: %s: %w", f.what, err)
		}
		if !locked {
			select {
			case <-ctx.Done():
				return fmt.Errorf("index: %s: waiting for another client's build: %w", f.what, ctx.Err())
			case <-time.After(lockPoll):
			}
		}
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), unlockSQL, schema); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing drops the lock
		}
	}()
	valid, err := f.Valid(ctx, conn, schema)
	if err != nil {
		return err
	}
	for _, name := range names {
		if slices.Contains(valid, name) {
			continue
		}
		if err := f.exec(ctx, conn, schema, f.drop[name]); err != nil {
			return err
		}
		if err := f.exec(ctx, conn, schema, f.create[name]); err != nil {
			return err
		}
		valid = append(valid, name)
	}
	return nil
}

// Disable drops the named indexes of the family, every one for names nil
// (concurrently).
func (f *Family) Disable(ctx context.Context, q Querier, schema string, names []string) error {
	if names == nil {
		names = f.names
	}
	for _, name := range names {
		if err := f.exec(ctx, q, schema, f.drop[name]); err != nil {
			return err
		}
	}
	return nil
}

// exec runs one statement of the family's files (CREATE/DROP INDEX
// CONCURRENTLY refuse to run in a transaction, which a multi-statement
// string is).
func (f *Family) exec(ctx context.Context, q Querier, schema, stmt string) error {
	if _, err := q.Exec(ctx, sqltemplate.Render(stmt, schema)); err != nil {
		return fmt.Errorf("index: %s: %w", f.what, err)
	}
	return nil
}

// withoutComments drops the "--" comment lines of stmt.
func withoutComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Config configures an Indexes handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of river_job; empty means the search_path.
	Schema string
	// Families are the families the handle manages (FetchOrder,
	// TenantFairness, and the engine's exclusive ones).
	Families []*Family
}

// Indexes is the handle on a schema's on-demand indexes.
type Indexes struct {
	db       DB
	schema   string
	families []*Family
}

// New returns the handle on the on-demand indexes of config.Families in
// config.Schema of config.DB.
func New(config Config) *Indexes {
	return &Indexes{db: config.DB, schema: config.Schema, families: slices.Clone(config.Families)}
}

// Index is one on-demand index.
type Index struct {
	// Name is the index's name in the schema.
	Name string `json:"name"`
	// Family is its family's name (Family.Name), such as "fetch-order".
	Family string `json:"family"`
	// Enabled says whether the index exists and is valid.
	Enabled bool `json:"enabled"`
}

// ListParams selects a page of indexes, by name: those of Family (""
// every family), only the enabled ones with Enabled, at most Limit (0:
// 100; at most 1000), after the cursor After ("" for the first page, then
// the Next of the previous page).
type ListParams struct {
	Family  string `json:"family,omitempty"`
	Enabled bool   `json:"enabled,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	After   string `json:"after,omitempty"`
}

// ListResult is a page of indexes; Next is the cursor of the next page, ""
// when there is none.
type ListResult struct {
	Items []*Index `json:"items"`
	Next  string   `json:"next,omitempty"`
}

// List returns one page of the indexes params selects (nil: every index of
// every family, enabled or not). An unknown family, a bad Limit or After
// is an error naming the field and the value.
func (x *Indexes) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("index", params.Limit)
	if err != nil {
		return nil, err
	}
	families := x.families
	if params.Family != "" {
		f := x.family(params.Family)
		if f == nil {
			return nil, fmt.Errorf("index: ListParams.Family %q is not a family of indexes (%s)", params.Family, strings.Join(x.familyNames(), ", "))
		}
		families = []*Family{f}
	}
	if params.After != "" && x.familyOf(params.After) == nil {
		return nil, fmt.Errorf("index: ListParams.After %q is not a cursor of this listing (an index name, as ListResult.Next gives)", params.After)
	}
	var all []*Index
	for _, f := range families {
		valid, err := f.Valid(ctx, x.db, x.schema)
		if err != nil {
			return nil, err
		}
		for _, name := range f.names {
			enabled := slices.Contains(valid, name)
			if name > params.After && (enabled || !params.Enabled) {
				all = append(all, &Index{Name: name, Family: f.name, Enabled: enabled})
			}
		}
	}
	slices.SortFunc(all, func(a, b *Index) int { return strings.Compare(a.Name, b.Name) })
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(all, limit, func(in *Index) string { return in.Name })
	return res, nil
}

// Enable creates the named indexes that do not exist or are invalid, with
// CREATE INDEX CONCURRENTLY: inserts and fetches go on while they are
// built. Idempotent; clients starting together build an index once. A name
// that is no index of the handle's families is an error naming it, before
// anything is built.
func (x *Indexes) Enable(ctx context.Context, names ...string) error {
	byFamily, err := x.group(names)
	if err != nil {
		return err
	}
	for _, f := range x.families {
		if err := f.Enable(ctx, x.db, x.schema, byFamily[f]); err != nil {
			return err
		}
	}
	return nil
}

// Disable drops the named indexes (concurrently). Fetches that read one
// stay correct but sort instead of reading it; a client fetching in such an
// order creates its index again when it starts. A name that is no index of
// the handle's families is an error naming it, before anything is dropped.
func (x *Indexes) Disable(ctx context.Context, names ...string) error {
	byFamily, err := x.group(names)
	if err != nil {
		return err
	}
	for _, f := range x.families {
		if len(byFamily[f]) > 0 {
			if err := f.Disable(ctx, x.db, x.schema, byFamily[f]); err != nil {
				return err
			}
		}
	}
	return nil
}

// group sorts names by family, refusing an unknown one.
func (x *Indexes) group(names []string) (map[*Family][]string, error) {
	byFamily := map[*Family][]string{}
	for _, name := range names {
		f := x.familyOf(name)
		if f == nil {
			return nil, fmt.Errorf("index: %q is not an on-demand index (families: %s)", name, strings.Join(x.familyNames(), ", "))
		}
		if !slices.Contains(byFamily[f], name) {
			byFamily[f] = append(byFamily[f], name)
		}
	}
	return byFamily, nil
}

func (x *Indexes) family(name string) *Family {
	for _, f := range x.families {
		if f.name == name {
			return f
		}
	}
	return nil
}

func (x *Indexes) familyOf(index string) *Family {
	for _, f := range x.families {
		if slices.Contains(f.names, index) {
			return f
		}
	}
	return nil
}

func (x *Indexes) familyNames() []string {
	names := make([]string, len(x.families))
	for i, f := range x.families {
		names[i] = f.name
	}
	return names
}
