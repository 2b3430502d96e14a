package workflow

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

// TestTenantIDValidated: a bad tenant id is rejected naming the field and
// the value, in a job context and on a process definition.
func TestTenantIDValidated(t *testing.T) {
	t.Parallel()
	err := JobContext{ProcessDefinitionKey: "p", TenantID: "acme\x00"}.Validate()
	var jcErr *JobContextError
	require.ErrorAs(t, err, &jcErr)
	require.Equal(t, "tenant_id", jcErr.Field)
	require.EqualError(t, err, `workflow: invalid job context: tenant_id "acme\x00": contains control character U+0000`)

	// A tenant alone is an identity: it needs its process definition.
	err = JobContext{TenantID: "acme"}.Validate()
	require.ErrorAs(t, err, &jcErr)
	require.Equal(t, "process_definition_key", jcErr.Field)

	_, err = NewEngine(nil, &Config{ProcessDefinitions: []ProcessDefinition{{Key: "p", TenantID: "a\nb"}}})
	require.EqualError(t, err, `workflow: process definition "p": TenantID "a\nb": contains control character U+000A`)
}

// TestAcquisitionTenantWeightsValidated: weights need FairByTenant, and
// each weight and tenant id is checked, naming it.
func TestAcquisitionTenantWeightsValidated(t *testing.T) {
	t.Parallel()
	engine, err := NewEngine(nil, &Config{})
	require.NoError(t, err)
	for _, tc := range []struct {
		acq  Acquisition
		want string
	}{
		{Acquisition{TenantWeights: map[string]int{"a": 2}}, `workflow: Acquisition.TenantWeights are used only with FairByTenant; set it`},
		{Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a": 0}}, `workflow: Acquisition.TenantWeights["a"] 0 must be between 1 and 1000`},
		{Acquisition{FairByTenant: true, TenantWeights: map[string]int{"": 1001}}, `workflow: Acquisition.TenantWeights[""] 1001 must be between 1 and 1000`},
		{Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a\x01": 1}}, `workflow: Acquisition.TenantWeights: tenant id "a\x01" contains control character U+0001`},
	} {
		_, err := engine.NewDriver(tc.acq)
		require.EqualError(t, err, tc.want)
	}
	_, err = engine.NewDriver(Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a": 3, "": 2}})
	require.NoError(t, err)
}

// TestTenantInheritedFromProcess: a job of a declared process with a tenant
// gets the tenant unless its context names one, and the tenant is stored in
// the metadata River UI shows (bpmn.tenant_id).
func TestTenantInheritedFromProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	engine, err := NewEngine(testPool(t), &Config{Schema: schema, ProcessDefinitions: []ProcessDefinition{{Key: "fair_process", TenantID: "acme"}}})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, fairWorker{})
	client, err := river.NewClient(engine.Driver(), &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}, Schema: schema, TestOnly: true, Workers: workers})
	require.NoError(t, err)

	inherited, err := client.Insert(ctx, fairArgs{Seq: 1}, nil)
	require.NoError(t, err)
	own, err := client.Insert(ctx, fairArgs{Tenant: "globex", Seq: 2}, nil)
	require.NoError(t, err)

	jc, err := JobContextOf(inherited.Job)
	require.NoError(t, err)
	require.Equal(t, "acme", jc.TenantID)
	require.Contains(t, string(inherited.Job.Metadata), `"tenant": "acme"`, "the tenant, labelled")
	jc, err = JobContextOf(own.Job)
	require.NoError(t, err)
	require.Equal(t, "globex", jc.TenantID)
	require.Equal(t, "globex", jobTenant(own.Job.Metadata))
}

// TestFairnessOffAddsNothing: without FairByTenant no fetch query of any
// combination of options or exclusive scope has a fair clause or parameter;
// with it, every one has.
func TestFairnessOffAddsNothing(t *testing.T) {
	t.Parallel()
	for _, scope := range allScopes {
		for _, acq := range acquisitionCombinations(priority.Range{Min: 0, Max: 10}, []string{"d"}) {
			off := testFetchQuery(t, "s", scope, acq)
			require.NotContains(t, off.SQL, "fair", acquisitionName(acq))
			for _, name := range []string{"fair_round", "fair_tenant", "fair_used"} {
				require.NotContains(t, off.Names, name)
			}
			acq.FairByTenant = true
			on := testFetchQuery(t, "s", scope, acq)
			require.Contains(t, on.SQL, "fair_tenants", acquisitionName(acq))
			for _, name := range []string{"fair_round", "fair_tenant", "fair_used"} {
				require.Contains(t, on.Names, name)
			}
		}
	}
}
