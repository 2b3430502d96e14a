package fetchplan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlanRiverOrder(t *testing.T) {
	t.Parallel()
	plan, err := New()
	require.NoError(t, err)
	require.True(t, plan.IsRiverOrder())
	require.Empty(t, plan.Filters("river_job"))
	require.Equal(t, "river_job.priority ASC,\n        river_job.scheduled_at ASC,\n        river_job.id ASC", plan.OrderBy("river_job"))
	require.Equal(t, "(e.priority, e.scheduled_at, e.id)\n            < (h.priority, h.scheduled_at, h.id)", plan.Before("e", "h"))
}

func TestPlanParts(t *testing.T) {
	t.Parallel()
	plan, err := New(
		Part{Name: "prio", Order: []OrderKey{{Expr: "f(river_job.metadata)", Desc: true}}},
		Part{Name: "due", Order: []OrderKey{{Expr: "river_job.scheduled_at"}}},
		Part{Name: "range", Filter: "f(river_job.metadata) BETWEEN @lo AND @hi", Params: []Param{
			{Name: "lo", Value: func() any { return 1 }}, {Name: "hi", Value: func() any { return 2 }},
		}},
	)
	require.NoError(t, err)
	require.False(t, plan.IsRiverOrder())
	require.Equal(t, []string{"f(earlier.metadata) BETWEEN @lo AND @hi"}, plan.Filters("earlier"))
	require.Equal(t, "f(river_job.metadata) DESC,\n        river_job.scheduled_at ASC,\n        river_job.priority ASC,\n        river_job.scheduled_at ASC,\n        river_job.id ASC",
		plan.OrderBy("river_job"))
	// A descending key swaps sides: e before h when f(e) > f(h), or equal
	// and e is due earlier, and so on.
	require.Equal(t, "(f(h.metadata), e.scheduled_at, e.priority, e.scheduled_at, e.id)\n            < (f(e.metadata), h.scheduled_at, h.priority, h.scheduled_at, h.id)",
		plan.Before("e", "h"))
	require.Len(t, plan.Params(), 2)
	require.Len(t, plan.Parts(), 3)
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	_, err := New(Part{Name: "empty"})
	require.EqualError(t, err, `fetchplan: part "empty" contributes nothing`)
	_, err = New(
		Part{Name: "a", Filter: "@x", Params: []Param{{Name: "x"}}},
		Part{Name: "b", Filter: "@x", Params: []Param{{Name: "x"}}},
	)
	require.EqualError(t, err, `fetchplan: parameter @x of part "b" is also a parameter of part "a"`)
}

func TestForAlias(t *testing.T) {
	t.Parallel()
	require.Equal(t, "x.a = river_bpmn_job.b AND \"river_job\".c AND s.river_job.d AND f(x.e)",
		ForAlias("river_job.a = river_bpmn_job.b AND \"river_job\".c AND s.river_job.d AND f(river_job.e)", "x"))
	require.Equal(t, "river_job.a", ForAlias("river_job.a", "river_job"))
}

func TestNumber(t *testing.T) {
	t.Parallel()
	n := Number("a = @queue::text AND b = ANY(@kind) AND c = @queue AND d @> e AND f = @lo_1")
	require.Equal(t, "a = $1::text AND b = ANY($2) AND c = $1 AND d @> e AND f = $3", n.SQL)
	require.Equal(t, []string{"queue", "kind", "lo_1"}, n.Names)
}

func TestHeadProbes(t *testing.T) {
	t.Parallel()
	river, err := New()
	require.NoError(t, err)
	require.Equal(t, []string{river.Before("e", "h")}, river.HeadProbes("e", "h"))

	unindexed, err := New(Part{Name: "due", Order: []OrderKey{{Expr: "river_job.scheduled_at"}}})
	require.NoError(t, err)
	require.Equal(t, []string{unindexed.Before("e", "h")}, unindexed.HeadProbes("e", "h"))

	// A descending KeyIndexed key followed by River's order: one row
	// comparison over the head-of-key index's columns, the key as ~key.
	indexed, err := New(Part{Name: "prio", Order: []OrderKey{{Expr: "f(river_job.metadata)", Desc: true, KeyIndexed: true}}})
	require.NoError(t, err)
	require.Equal(t, []string{
		"(~(f(e.metadata)), e.priority, e.scheduled_at, e.id)\n            < (~(f(h.metadata)), h.priority, h.scheduled_at, h.id)",
	}, indexed.HeadProbes("e", "h"))
	require.Equal(t, "~(f(j.metadata)) ASC,\n        j.priority ASC,\n        j.scheduled_at ASC,\n        j.id ASC", indexed.HeadOrderBy("j"))

	// A key that is not KeyIndexed after one that is: no head-of-key
	// index holds the order, so the probe is Before.
	indexedThenDue, err := New(
		Part{Name: "prio", Order: []OrderKey{{Expr: "f(river_job.metadata)", Desc: true, KeyIndexed: true}}},
		Part{Name: "due", Order: []OrderKey{{Expr: "river_job.scheduled_at"}}},
	)
	require.NoError(t, err)
	require.Equal(t, []string{indexedThenDue.Before("e", "h")}, indexedThenDue.HeadProbes("e", "h"))
	require.Equal(t, indexedThenDue.OrderBy("j"), indexedThenDue.HeadOrderBy("j"))
	require.False(t, indexedThenDue.HeadIndexed())

	// Every key KeyIndexed: one row comparison over the index's columns,
	// a descending key in its Ascending form (or ~key), and River's
	// scheduled_at left out after the due-date key that already has it.
	allIndexed, err := New(
		Part{Name: "prio", Order: []OrderKey{{Expr: "f(river_job.metadata)", Desc: true, KeyIndexed: true}}},
		Part{Name: "timer", Order: []OrderKey{{Expr: "g(river_job.metadata)", Desc: true, KeyIndexed: true, Ascending: "NOT g(river_job.metadata)"}}},
		Part{Name: "due", Order: []OrderKey{{Expr: "river_job.scheduled_at", KeyIndexed: true}}},
	)
	require.NoError(t, err)
	require.Equal(t, []string{
		"(~(f(e.metadata)), NOT g(e.metadata), e.scheduled_at, e.priority, e.id)\n            < (~(f(h.metadata)), NOT g(h.metadata), h.scheduled_at, h.priority, h.id)",
	}, allIndexed.HeadProbes("e", "h"))
	require.Equal(t, "~(f(j.metadata)) ASC,\n        NOT g(j.metadata) ASC,\n        j.scheduled_at ASC,\n        j.priority ASC,\n        j.id ASC", allIndexed.HeadOrderBy("j"))
	require.True(t, allIndexed.HeadIndexed())

	require.Equal(t, river.OrderBy("j"), river.HeadOrderBy("j"))
	require.Equal(t, unindexed.OrderBy("j"), unindexed.HeadOrderBy("j"))
	require.True(t, indexed.HeadIndexed())
	require.False(t, river.HeadIndexed())
	require.False(t, unindexed.HeadIndexed())
}
