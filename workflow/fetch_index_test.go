package workflow

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

// TestExclusiveHeadIndexNames: an on-demand head-of-key index exists for
// each enforcing scope and order with timers first or due date, none for
// River's order, by priority alone (migrations' indexes) or without
// exclusivity; filters choose no index; every name has its statements.
func TestExclusiveHeadIndexNames(t *testing.T) {
	t.Parallel()
	require.Empty(t, ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{}))
	require.Empty(t, ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 0, Max: 1}}))
	require.Empty(t, ExclusiveHeadIndex(exclusive.None, Acquisition{TimersFirst: true}))
	require.Equal(t, "river_bpmn_job_exclusive_instance_ptd", ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true, DeploymentAware: true}))
	require.Equal(t, "river_bpmn_job_exclusive_root_d", ExclusiveHeadIndex(exclusive.RootProcessInstance, Acquisition{ByDueDate: true}))
	require.Len(t, exclusiveHeadIndexNames, 12)
	for _, name := range exclusiveHeadIndexNames {
		require.Contains(t, exclusiveHeadIndexes.CreateStatement(name), "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+name+" ")
		require.True(t, strings.HasSuffix(strings.TrimSuffix(strings.TrimSpace(exclusiveHeadIndexes.DropStatement(name)), ";"), "*/"+name), exclusiveHeadIndexes.DropStatement(name))
	}
}
