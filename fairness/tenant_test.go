package fairness_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestTenantID: what a job's tenant is, and which tenant ids are valid.
func TestTenantID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Validated: a bad tenant id is rejected naming the field and the
	// value, in a job context and on a process definition.
	t.Run("Validated", func(t *testing.T) {
		t.Parallel()
		err := workflow.JobContext{ProcessDefinitionKey: "p", TenantID: "acme\x00"}.Validate()
		var jcErr *workflow.JobContextError
		require.ErrorAs(t, err, &jcErr)
		require.Equal(t, "tenant_id", jcErr.Field)
		require.EqualError(t, err, `workflow: invalid job context: tenant_id "acme\x00": contains control character U+0000`)

		// A tenant alone is an identity: it needs its process definition.
		err = workflow.JobContext{TenantID: "acme"}.Validate()
		require.ErrorAs(t, err, &jcErr)
		require.Equal(t, "process_definition_key", jcErr.Field)

		_, err = workflow.NewEngine(nil, &workflow.Config{ProcessDefinitions: []workflow.ProcessDefinition{{Key: "p", TenantID: "a\nb"}}})
		require.EqualError(t, err, `workflow: process definition "p": TenantID "a\nb": contains control character U+000A`)
	})

	// InheritedFromProcess: a job of a declared process with a tenant gets
	// the tenant unless its context names one, and the tenant is stored in
	// the metadata River UI shows (bpmn.tenant), where the fetch reads it
	// (river_bpmn_ctx_tenant).
	t.Run("InheritedFromProcess", func(t *testing.T) {
		t.Parallel()
		bundle := setupEngine(ctx, t, &workflow.Config{ProcessDefinitions: []workflow.ProcessDefinition{{Key: "fair_process", TenantID: "acme"}}})
		inherited, err := bundle.Client.Insert(ctx, fairArgs{Seq: 1}, nil)
		require.NoError(t, err)
		own, err := bundle.Client.Insert(ctx, fairArgs{Tenant: "globex", Seq: 2}, nil)
		require.NoError(t, err)

		jc, err := workflow.JobContextOf(inherited.Job)
		require.NoError(t, err)
		require.Equal(t, "acme", jc.TenantID)
		require.Contains(t, string(inherited.Job.Metadata), `"tenant": "acme"`, "the tenant, labelled")
		jc, err = workflow.JobContextOf(own.Job)
		require.NoError(t, err)
		require.Equal(t, "globex", jc.TenantID)
		for id, want := range map[int64]string{inherited.Job.ID: "acme", own.Job.ID: "globex"} {
			var tenant string
			require.NoError(t, bundle.DBPool.QueryRow(ctx, fmt.Sprintf(`SELECT %[1]s.river_bpmn_ctx_tenant(metadata) FROM %[1]s.river_job WHERE id = $1`,
				pgx.Identifier{bundle.Schema}.Sanitize()), id).Scan(&tenant))
			require.Equal(t, want, tenant, "the tenant the fetch reads")
		}
	})
}

// TestTenantWeights: Acquisition.TenantWeights, checked when a driver is
// made.
func TestTenantWeights(t *testing.T) {
	t.Parallel()

	// Validated: weights need FairByTenant, and each weight and tenant id
	// is checked, naming it.
	t.Run("Validated", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, &workflow.Config{})
		require.NoError(t, err)
		for _, tc := range []struct {
			acq  workflow.Acquisition
			want string
		}{
			{workflow.Acquisition{TenantWeights: map[string]int{"a": 2}}, `workflow: Acquisition.TenantWeights are used only with FairByTenant; set it`},
			{workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a": 0}}, `workflow: Acquisition.TenantWeights["a"] 0 must be between 1 and 1000`},
			{workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"": 1001}}, `workflow: Acquisition.TenantWeights[""] 1001 must be between 1 and 1000`},
			{workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a\x01": 1}}, `workflow: Acquisition.TenantWeights: tenant id "a\x01" contains control character U+0001`},
		} {
			_, err := engine.NewDriver(tc.acq)
			require.EqualError(t, err, tc.want)
		}
		_, err = engine.NewDriver(workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"a": 3, "": 2}})
		require.NoError(t, err)
	})
}
