// Package fetchplan assembles a River client's fetch statement from parts
// and steps, and renders it (Plan.Render, sql/fetch.sql).
//
// Each acquisition option of riverbpmn is a Part: a filter (a condition a job
// must meet to be fetched by the client), order keys (which jobs come first),
// or both, and the parameters its SQL needs. A Plan puts a client's parts
// together, once, when the client is built:
//
//   - the filters are AND-ed to River's own conditions (available, the
//     queue, the kinds, due);
//
//   - the order keys come first, in the order the parts were given, and
//     River's own order (priority, scheduled_at, id) always ends the order,
//     so ties are broken as River breaks them and the order is total;
//
//   - the same filters and order decide which job of an exclusive key is
//     its head (Plan.Before), so the exclusive step follows the client's
//     order too.
//
//   - a part may group the fetch (Part.Group, such as by tenant): the fetch
//     is then fair over the groups, round-robin, each group's jobs in the
//     plan's order; see Plan.Group.
//
// A Plan with no part renders River's own conditions and order: a client
// that enables nothing fetches exactly as stock River does. An option that
// is off contributes nothing: no clause, no parameter.
//
// Parts write SQL against the row named river_job, with every column
// qualified ("river_job.metadata"), and name their parameters "@name". The
// planner renders the same part for other row aliases (the exclusive step
// compares a job with an earlier job of its key), and the caller numbers the
// parameters (Params lists them). A part may also use the fetch's own
// parameters without declaring them: @queue, @kind, @now (NULL in
// production: use coalesce(@now::timestamptz, now())), @client_id.
//
// Adding an option is adding a Part, nothing else changes, and the plan test
// renders every combination and checks its plan. A "not expired" filter is
// a Filter such as "river_job.metadata -> 'x' ... > coalesce(@now::timestamptz,
// now())". Tenant round-robin is a Part with a Group (the tenant
// expression): the fetch skip-scans the distinct groups of the queue's
// available jobs over an index on (queue, group, order keys), takes each
// group's first jobs in the plan's order (LATERAL ... LIMIT), and ranks them
// by (round, group, order), a job's round being its slot (the group's start
// slot, carried from the client's previous fetch, plus its place within the
// group) divided by the group's weight; see package fairness (its fair
// step, fairness/sql/fetch_step.sql), workflow/acquisition.go and
// sql/fetch.sql.
//
// Exclusivity and fairness plug into the statement as typed steps
// (ExclusiveStep from exclusive.FetchStep, FairStep from
// fairness.FetchStep): their text/template definitions are executed where
// the statement calls them, and every step ends as River's fetch does. The
// rendered Statement binds its parameters by name (Args, Statement.Bind).
//
// This package knows no option and no table layout beyond River's river_job
// columns; the options' parts are defined where the options are (package
// workflow, acquisition.go).
package fetchplan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// OrderKey is one key of a fetch order: an SQL expression over the row
// river_job, ascending unless Desc. The expression must never be NULL (a
// NULL makes the head-of-key comparison unknown); wrap it in coalesce.
type OrderKey struct {
	Expr string
	Desc bool

	// KeyIndexed says that the head-of-key indexes of an order made of
	// KeyIndexed keys hold this key right after the key and queue (in the
	// order's precedence, then River's order), ascending, so that the head
	// probe is one row comparison over the index's columns (HeadProbes). A
	// Desc KeyIndexed key is held in its ascending form, Ascending.
	KeyIndexed bool

	// Ascending, for a Desc KeyIndexed key, is the expression the
	// head-of-key indexes hold for it: one over the row river_job whose
	// ascending order is Expr's descending order, such as "NOT (Expr)" for
	// a boolean. Empty means the bitwise complement ~(Expr), which orders
	// as a bigint Expr descending (and cannot overflow).
	Ascending string
}

// Param is a parameter of a part's SQL: its name (written "@name" in the
// SQL) and the function giving its value at each fetch (so a value may
// change at run time, like a set of registered deployments).
type Param struct {
	Name  string
	Value func() any
}

// Part is what one acquisition option contributes to a client's fetch.
type Part struct {
	// Name names the option, for errors and plan tests.
	Name string

	// Filter is a condition over the row river_job that a job must meet to
	// be fetched by the client; empty for none.
	Filter string

	// Order are keys that come before River's order (and before the keys of
	// later parts).
	Order []OrderKey

	// Params are the parameters Filter, Order and Weight use.
	Params []Param

	// Group, if set, makes the fetch fair over groups (such as tenants): an
	// SQL expression over the row river_job giving a job's group, never
	// NULL (give the jobs of no group a value of their own). A fetch of
	// N jobs then takes them round-robin over the groups that have waiting
	// jobs, in rounds that carry from fetch to fetch, each group's jobs in
	// the plan's order (Plan.Group). At most one part of a plan may set it.
	Group string

	// Weight, with Group, is an SQL expression over the column "fair_group"
	// giving the group's weight, an integer >=
	// 1: the group takes that many jobs per round. Empty means 1.
	Weight string
}

// RiverOrder is River's own fetch order, which ends every plan's order.
var RiverOrder = []OrderKey{
	{Expr: "river_job.priority"},
	{Expr: "river_job.scheduled_at"},
	{Expr: "river_job.id"},
}

// Plan is a client's fetch, assembled from its parts. It is immutable.
type Plan struct {
	parts []Part
}

// New returns the plan of parts, in the order given (which is the
// precedence of their order keys). A part with neither a filter nor order
// keys is an error, as is a parameter name used by two parts.
func New(parts ...Part) (*Plan, error) {
	seen := map[string]string{}
	for _, part := range parts {
		if part.Filter == "" && len(part.Order) == 0 && part.Group == "" {
			return nil, fmt.Errorf("fetchplan: part %q contributes nothing", part.Name)
		}
		for _, param := range part.Params {
			if other, ok := seen[param.Name]; ok {
				return nil, fmt.Errorf("fetchplan: parameter @%s of part %q is also a parameter of part %q", param.Name, part.Name, other)
			}
			seen[param.Name] = part.Name
		}
	}
	groups := 0
	for _, part := range parts {
		if part.Group != "" {
			groups++
		}
	}
	if groups > 1 {
		return nil, fmt.Errorf("fetchplan: %d parts group the fetch; at most one may", groups)
	}
	return &Plan{parts: slices.Clone(parts)}, nil
}

// Group returns the grouping expression of a fair plan, rendered for the
// row named alias, and the weight expression over the column fair_group
// ("1" when the part gives none); ok is false when no part groups the fetch.
func (p *Plan) Group(alias string) (group, weight string, ok bool) {
	for _, part := range p.parts {
		if part.Group != "" {
			weight = part.Weight
			if weight == "" {
				weight = "1"
			}
			return ForAlias(part.Group, alias), weight, true
		}
	}
	return "", "", false
}

// OrderColumns renders the plan's order keys over the row named alias as a
// select list, "expr AS fair_key_1, ...", so that rows taken out of their
// scan can still be ordered (OrderByColumns).
func (p *Plan) OrderColumns(alias string) string {
	keys := p.Order()
	items := make([]string, len(keys))
	for i, key := range keys {
		items[i] = fmt.Sprintf("%s AS fair_key_%d", ForAlias(key.Expr, alias), i+1)
	}
	return strings.Join(items, ", ")
}

// OrderByColumns renders the plan's order over the columns OrderColumns
// selected, of the row named alias, as an ORDER BY list.
func (p *Plan) OrderByColumns(alias string) string {
	keys := p.Order()
	items := make([]string, len(keys))
	for i, key := range keys {
		dir := "ASC"
		if key.Desc {
			dir = "DESC"
		}
		items[i] = fmt.Sprintf("%s.fair_key_%d %s", alias, i+1, dir)
	}
	return strings.Join(items, ", ")
}

// Parts returns the plan's parts.
func (p *Plan) Parts() []Part { return slices.Clone(p.parts) }

// Params returns the parameters of every part.
func (p *Plan) Params() []Param {
	var params []Param
	for _, part := range p.parts {
		params = append(params, part.Params...)
	}
	return params
}

// Filters returns the filters of the plan, each rendered for the row named
// alias.
func (p *Plan) Filters(alias string) []string {
	var filters []string
	for _, part := range p.parts {
		if part.Filter != "" {
			filters = append(filters, ForAlias(part.Filter, alias))
		}
	}
	return filters
}

// Order returns every key of the plan's order, River's last.
func (p *Plan) Order() []OrderKey {
	var keys []OrderKey
	for _, part := range p.parts {
		keys = append(keys, part.Order...)
	}
	return append(keys, RiverOrder...)
}

// IsRiverOrder reports whether the plan orders as River does (no part adds
// an order key).
func (p *Plan) IsRiverOrder() bool { return len(p.Order()) == len(RiverOrder) }

// OrderBy renders the plan's order for the row named alias, as an ORDER BY
// list.
func (p *Plan) OrderBy(alias string) string { return orderBy(p.Order(), alias) }

// orderBy renders keys for the row named alias as an ORDER BY list.
func orderBy(keys []OrderKey, alias string) string {
	items := make([]string, len(keys))
	for i, key := range keys {
		dir := "ASC"
		if key.Desc {
			dir = "DESC"
		}
		items[i] = ForAlias(key.Expr, alias) + " " + dir
	}
	return strings.Join(items, ",\n        ")
}

// Before renders the condition "row earlier comes before row later in the
// plan's order", as one row comparison: a descending key swaps its two
// sides, so (a DESC, b ASC) becomes (later.a, earlier.b) < (earlier.a,
// later.b). With River's order it is (earlier.priority,
// earlier.scheduled_at, earlier.id) < (later.priority, later.scheduled_at,
// later.id), which an index in River's order serves as an index condition.
func (p *Plan) Before(earlier, later string) string { return before(p.Order(), earlier, later) }

// before renders "row earlier comes before row later" in the order of keys,
// as one row comparison (Before).
func before(keys []OrderKey, earlier, later string) string {
	left := make([]string, len(keys))
	right := make([]string, len(keys))
	for i, key := range keys {
		e, l := ForAlias(key.Expr, earlier), ForAlias(key.Expr, later)
		if key.Desc {
			e, l = l, e
		}
		left[i], right[i] = e, l
	}
	return "(" + strings.Join(left, ", ") + ")\n            < (" + strings.Join(right, ", ") + ")"
}

// HeadProbes renders the conditions "row earlier comes before row later in
// the plan's order" as one or more conditions whose disjunction is Before:
// the exclusive step asks NOT EXISTS of each, so that each can be answered
// by an index. With River's order, or an order with a key that is not
// KeyIndexed, it is Before alone. With an order of KeyIndexed keys it is
// one row comparison over the order as the head-of-key index of that order
// holds it (headOrder: every key ascending, a descending key in its
// Ascending form), which the index serves as an index condition: a probe
// for a key's head reads nothing but the index's first entry of the key
// (the comparison with the head itself ends the scan), however many jobs
// of the key wait after it.
func (p *Plan) HeadProbes(earlier, later string) []string {
	if !p.HeadIndexed() {
		return []string{p.Before(earlier, later)}
	}
	return []string{before(p.headOrder(), earlier, later)}
}

// HeadOrderBy renders the plan's order for the row named alias as an ORDER
// BY list that the head-of-key indexes serve: with an order of KeyIndexed
// keys, the order as those indexes hold it (headOrder), for reading a key's
// waiting jobs off them; OrderBy otherwise.
func (p *Plan) HeadOrderBy(alias string) string {
	if !p.HeadIndexed() {
		return p.OrderBy(alias)
	}
	return orderBy(p.headOrder(), alias)
}

// headOrder is the plan's whole order (River's included) as the head-of-key
// index of an order of KeyIndexed keys holds it: every key ascending, a
// descending key in its Ascending form (~(Expr) by default), and a key
// whose expression an earlier key already has left out (such as River's
// scheduled_at after a due-date key): it can only compare equal there, so
// leaving it out changes no comparison and no order.
func (p *Plan) headOrder() []OrderKey {
	var keys []OrderKey
	seen := map[string]bool{}
	for _, key := range p.Order() {
		expr := key.Expr
		if key.Desc {
			expr = key.Ascending
			if expr == "" {
				expr = "~(" + key.Expr + ")"
			}
		}
		if !seen[key.Expr] && !seen[expr] {
			keys = append(keys, OrderKey{Expr: expr, KeyIndexed: true})
		}
		seen[key.Expr], seen[expr] = true, true
	}
	return keys
}

// HeadIndexed says whether the plan adds order keys to River's and every
// one is KeyIndexed, so that a head-of-key index holds the plan's whole
// order and HeadProbes and HeadOrderBy are written over it.
func (p *Plan) HeadIndexed() bool {
	keys := p.Order()
	if len(keys) == len(RiverOrder) {
		return false
	}
	for _, key := range keys[:len(keys)-len(RiverOrder)] {
		if !key.KeyIndexed {
			return false
		}
	}
	return true
}

// rowRef matches a reference to the row river_job ("river_job." not
// preceded by a word character, a dot or a quote).
var rowRef = regexp.MustCompile(`(^|[^\w."])river_job\.`)

// ForAlias renders sql, written over the row river_job, for the row alias.
func ForAlias(sql, alias string) string {
	if alias == "river_job" {
		return sql
	}
	return rowRef.ReplaceAllString(sql, "${1}"+alias+".")
}

// paramRef matches a parameter reference, "@name".
var paramRef = regexp.MustCompile(`@([a-z_][a-z0-9_]*)`)

// Numbered is SQL with numbered parameters, and their names in $1, $2, ...
// order.
type Numbered struct {
	SQL   string
	Names []string
}

// Number replaces every "@name" in sql with a positional parameter, numbered
// in order of first appearance (a name used twice gets one number), so that
// a clause left out leaves no gap.
func Number(sql string) Numbered {
	var names []string
	out := paramRef.ReplaceAllStringFunc(sql, func(match string) string {
		name := match[1:]
		i := slices.Index(names, name)
		if i < 0 {
			names = append(names, name)
			i = len(names) - 1
		}
		return fmt.Sprintf("$%d", i+1)
	})
	return Numbered{SQL: out, Names: names}
}
