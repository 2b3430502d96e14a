package fetchplan

import (
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/riverbpmn/riverbpmn/internal/jobrow"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// fetchSQL is the fetch statement's template: River's own fetch when the
// client has no step, the steps' definitions executed where they plug in.
// The file's leading comment is for its readers, not sent with the
// statement.
var fetchSQL = withoutLeadingComment(sqltemplate.MustRead(sqlFS, "sql/fetch.sql"))

// withoutLeadingComment returns sql without the "--" lines it starts with.
func withoutLeadingComment(sql string) string {
	for strings.HasPrefix(sql, "--") {
		end := strings.IndexByte(sql, '\n')
		if end < 0 {
			return ""
		}
		sql = sql[end+1:]
	}
	return sql
}

// ExclusiveStep is the exclusive step of a fetch statement (package
// exclusive, exclusive.FetchStep): the fetch takes only the head of each
// exclusive key whose key no running attempt holds, and records the key it
// takes in the same statement.
type ExclusiveStep struct {
	// Templates are the step's text/template definitions; the statement
	// executes "exclusive_step" in place of River's locked_jobs and update.
	Templates string
	// Batch makes the step take runs of a key's jobs (each row then also
	// carries its place in its key's run and the run's length).
	Batch bool
	// CountHeld makes the statement also return, as its last column, how
	// many candidates it passed over because their key was held.
	CountHeld bool
	// HeadMarker is the condition, over the row river_job, that the head
	// probe states so that it reads the order's head-of-key index ("" for
	// none).
	HeadMarker string
	// Render fills the step's own markers (the key of a row, the liveness
	// of a lock row) and then the schema's and markerValues', as
	// sqltemplate.Render does.
	Render func(sql, schema string, markerValues ...string) string
}

// FairStep is the fair step of a fetch statement (package fairness,
// fairness.FetchStep): the fetch takes jobs round-robin over the groups of
// the plan's grouping part.
type FairStep struct {
	// Templates are the step's text/template definitions: "fair" (the
	// ranked picks) and "fair_locked_jobs" (the jobs a fair fetch without
	// the exclusive step locks).
	Templates string
}

// StatementConfig is what a fetch statement is rendered from besides the
// plan: the schema and the steps plugged in (nil: none).
type StatementConfig struct {
	Schema    string
	Exclusive *ExclusiveStep
	// Fair is used when the plan groups (Plan.Group); a grouping plan
	// without it is an error.
	Fair *FairStep
}

// Statement is a client's fetch statement, rendered once: SQL with
// numbered parameters and their names, and which steps it has.
type Statement struct {
	// SQL is the statement, ready to run: it returns the river_job columns
	// of internal/jobrow's scanner (then, with the exclusive step, the key
	// columns of exclusive.Keeper.Fetch).
	SQL string
	// Names are the parameters' names in $1, $2, ... order.
	Names []string
	// Exclusive, Fair, Batch and CountHeld say which steps the statement
	// has: the exclusive step (with runs, with the count of held
	// candidates), the fair step.
	Exclusive, Fair, Batch, CountHeld bool

	planParams map[string]func() any
}

// Args are the values of a fetch statement's parameters for one fetch, by
// name: River's fetch parameters (queue, kind, now, max_to_lock,
// max_attempted_by, client_id) and the steps' own. The plan's parameters
// need not be given: Statement.Bind takes them from the plan's parts.
type Args map[string]any

// Bind returns the statement's arguments in $1, $2, ... order: each name's
// value in args, or else the plan's own parameter's current value. A name
// with neither is an error naming it.
func (s *Statement) Bind(args Args) ([]any, error) {
	values := make([]any, len(s.Names))
	for i, name := range s.Names {
		if value, ok := args[name]; ok {
			values[i] = value
			continue
		}
		param, ok := s.planParams[name]
		if !ok {
			return nil, fmt.Errorf("fetchplan: fetch statement parameter @%s has no value", name)
		}
		values[i] = param()
	}
	return values, nil
}

// statementData is what the fetch template is rendered with: the steps the
// statement has.
type statementData struct{ Exclusive, Fair, Batch, CountHeld bool }

// Render renders the fetch statement of plan with config's steps. Its
// parameters are numbered in the order they first appear, so a clause that
// is left out leaves no gap. With no step and a plan of no part, it is
// River's own fetch statement, clause for clause.
func (p *Plan) Render(config StatementConfig) (*Statement, error) {
	_, _, fair := p.Group("river_job")
	if fair && config.Fair == nil {
		return nil, fmt.Errorf("fetchplan: the plan groups its fetch, but no fair step is given")
	}
	headMarker := ""
	text := fetchSQL
	if fair {
		text += config.Fair.Templates
	}
	if x := config.Exclusive; x != nil {
		headMarker = x.HeadMarker
		text += x.Templates
	}
	tmpl, err := template.New("fetch.sql").Funcs(template.FuncMap{
		"filters":     p.Filters,
		"orderBy":     p.OrderBy,
		"before":      p.Before,
		"headProbes":  p.HeadProbes,
		"headIndexed": p.HeadIndexed,
		"headOrderBy": p.HeadOrderBy,
		"headMarker": func(alias string) string {
			if headMarker == "" {
				return ""
			}
			return ForAlias(headMarker, alias)
		},
		"orderColumns":   p.OrderColumns,
		"orderByColumns": p.OrderByColumns,
		"fairTurn":       func(alias string) string { return alias + ".fair_turn" },
		"fairArgs": func(limit string) any {
			group, weight, _ := p.Group("river_job")
			return struct{ Group, Weight, Limit string }{group, weight, limit}
		},
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("fetchplan: parsing the fetch statement: %w", err)
	}
	data := statementData{Fair: fair}
	if x := config.Exclusive; x != nil {
		data.Exclusive, data.Batch, data.CountHeld = true, x.Batch, x.CountHeld
	}
	var sb strings.Builder
	if err := tmpl.Execute(&sb, data); err != nil {
		return nil, fmt.Errorf("fetchplan: rendering the fetch statement: %w", err)
	}
	numbered := Number(sb.String())
	stmt := &Statement{
		Names: numbered.Names, Exclusive: data.Exclusive, Fair: data.Fair, Batch: data.Batch, CountHeld: data.CountHeld,
		planParams: map[string]func() any{},
	}
	for _, param := range p.Params() {
		stmt.planParams[param.Name] = param.Value
	}
	columns := []string{jobrow.ColumnsMarker, jobrow.QualifiedColumns("river_job")}
	if x := config.Exclusive; x != nil {
		stmt.SQL = x.Render(numbered.SQL, config.Schema, columns...)
	} else {
		stmt.SQL = sqltemplate.Render(numbered.SQL, config.Schema, columns...)
	}
	return stmt, nil
}
