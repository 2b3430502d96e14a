package workflow

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

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
