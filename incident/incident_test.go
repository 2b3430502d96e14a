package incident_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// failArgs is a job of activity "act" of process "p" in instance Instance.
type failArgs struct {
	Instance string `json:"instance"`
}

func (failArgs) Kind() string { return "incident_test" }

func (a failArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: a.Instance, ActivityID: "act"}
}

func TestIncidents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		incidents *incident.Incidents
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "p"}},
			JobDefinitions:     []workflow.JobDefinition{{ID: "def", ProcessDefinitionKey: "p", ActivityID: "act", Kind: "incident_test"}},
		}})
		return &testBundle{Bundle: bundle, incidents: bundle.Engine.Incidents()}
	}

	// fail inserts a job of instance and discards it (retries set to 0),
	// which opens its incident; it returns the job's id.
	fail := func(t *testing.T, bundle *testBundle, instance string) int64 {
		t.Helper()
		res, err := bundle.Client.Insert(ctx, failArgs{Instance: instance}, nil)
		require.NoError(t, err)
		require.NoError(t, bundle.Engine.Jobs().SetRetries(ctx, res.Job.ID, 0))
		return res.Job.ID
	}

	jobIDs := func(items []*incident.Incident) []int64 {
		ids := make([]int64, len(items))
		for i, in := range items {
			ids[i] = in.JobID
		}
		return ids
	}

	// Walking the pages from the first lists every open incident once, in
	// the order asked; Next is empty exactly on the last page, so there is
	// never a next page that comes back empty.
	t.Run("ListPages", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var jobs []int64
		for _, pi := range []string{"pi-1", "pi-2", "pi-3", "pi-4"} {
			jobs = append(jobs, fail(t, bundle, pi))
		}

		first, err := bundle.incidents.List(ctx, &incident.ListParams{Oldest: true, Limit: 2})
		require.NoError(t, err)
		require.Equal(t, jobs[:2], jobIDs(first.Items))
		require.NotEmpty(t, first.Next)
		second, err := bundle.incidents.List(ctx, &incident.ListParams{Oldest: true, Limit: 2, After: first.Next})
		require.NoError(t, err)
		require.Equal(t, jobs[2:], jobIDs(second.Items))
		require.Empty(t, second.Next, "the page that ends the list has no Next")

		newest, err := bundle.incidents.List(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []int64{jobs[3], jobs[2], jobs[1], jobs[0]}, jobIDs(newest.Items))
		require.Empty(t, newest.Next)

		in := newest.Items[0]
		require.Equal(t, incident.TypeFailedJob, in.Type)
		require.Equal(t, "def", in.JobDefinitionID)
		require.Equal(t, "act", in.ActivityID)
		require.Equal(t, "pi-4", in.ProcessInstanceID)
		require.Nil(t, in.ResolvedAt)
	})

	// A resolved incident (its job's retries set again) leaves the open
	// listing and stays in the listing with Resolved; a job's incidents are
	// listed by JobID, and a job id that names neither a job nor an incident
	// is ErrNotFound naming it.
	t.Run("ResolvedAndJob", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		a := fail(t, bundle, "pi-a")
		b := fail(t, bundle, "pi-b")
		require.NoError(t, bundle.Engine.Jobs().SetRetries(ctx, a, 1))

		open, err := bundle.incidents.List(ctx, &incident.ListParams{})
		require.NoError(t, err)
		require.Equal(t, []int64{b}, jobIDs(open.Items))
		all, err := bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{Resolved: true}, Oldest: true})
		require.NoError(t, err)
		require.Equal(t, []int64{a, b}, jobIDs(all.Items))
		require.NotNil(t, all.Items[0].ResolvedAt)

		ofA, err := bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: a, Resolved: true}})
		require.NoError(t, err)
		require.Equal(t, []int64{a}, jobIDs(ofA.Items))
		openOfA, err := bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: a}})
		require.NoError(t, err)
		require.Empty(t, openOfA.Items, "a job that exists has no open incident: an empty page, not an error")

		_, err = bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: 1 << 40}})
		require.ErrorIs(t, err, incident.ErrNotFound)
		require.ErrorContains(t, err, "job 1099511627776")
		// The deprecated Engine method still wraps workflow.ErrNotFound.
		_, err = bundle.Engine.JobIncidents(ctx, 1<<40)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// The Cockpit filters select incidents; Groups groups them by the first
	// line of their error; Count counts the open ones a bulk retry walks.
	t.Run("FiltersGroupsCount", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		fail(t, bundle, "order-1")
		fail(t, bundle, "order-2")
		other := fail(t, bundle, "invoice-1")

		orders, err := bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{Incidents: bulk.Incidents{InstancePrefix: "order-"}}})
		require.NoError(t, err)
		require.Len(t, orders.Items, 2)
		none, err := bundle.incidents.List(ctx, &incident.ListParams{Filter: incident.Filter{Incidents: bulk.Incidents{ActivityID: "elsewhere"}}})
		require.NoError(t, err)
		require.Empty(t, none.Items)

		groups, err := bundle.incidents.Groups(ctx, nil)
		require.NoError(t, err)
		require.Len(t, groups, 1, "retries set to 0 before any failure: one group of incidents without an error")
		require.EqualValues(t, 3, groups[0].Count)
		groups, err = bundle.incidents.Groups(ctx, &incident.Filter{JobID: other})
		require.NoError(t, err)
		require.EqualValues(t, 1, groups[0].Count)

		n, err := bundle.incidents.Count(ctx, &bulk.Incidents{InstancePrefix: "order-"})
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
	})

	// Bad paging input is refused before any query, naming the field and
	// the value.
	t.Run("BadParams", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		_, err := bundle.incidents.List(ctx, &incident.ListParams{Limit: 1001})
		require.ErrorContains(t, err, "incident: ListParams.Limit must be 0 (default 100) to 1000, got 1001")
		_, err = bundle.incidents.List(ctx, &incident.ListParams{After: "x"})
		require.ErrorContains(t, err, `incident: ListParams.After "x"`)
	})
}
