package instance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTreeOrder (an internal test: treeOrder is pure, the external tests
// reach it only through the database): the members of a call hierarchy come back depth first,
// each under the instance its jobs name as caller, an instance whose caller
// is unknown under the root, every member once even when the recorded
// callers form a cycle (data written by hand), and each member's open
// incidents summed over its subtree.
func TestTreeOrder(t *testing.T) {
	t.Parallel()
	member := func(id, parent string, incidents int64) *TreeMember {
		return &TreeMember{ProcessInstanceID: id, ParentProcessInstanceID: parent, OpenIncidents: incidents}
	}
	shape := func(members []*TreeMember) []string {
		var out []string
		for _, m := range members {
			out = append(out, string(rune('0'+m.Depth))+":"+m.ProcessInstanceID)
		}
		return out
	}

	t.Run("NestedByCaller", func(t *testing.T) {
		t.Parallel()
		got := treeOrder("r", []*TreeMember{
			member("a", "r", 0), member("a1", "a", 2), member("b", "r", 1), member("orphan", "gone", 0), member("r", "", 0),
		})
		require.Equal(t, []string{"0:r", "1:a", "2:a1", "1:b", "1:orphan"}, shape(got))
		require.Equal(t, int64(3), got[0].SubtreeOpenIncidents)
		require.Equal(t, int64(2), got[1].SubtreeOpenIncidents)
	})

	t.Run("CycleListedOnce", func(t *testing.T) {
		t.Parallel()
		got := treeOrder("r", []*TreeMember{member("x", "y", 1), member("y", "x", 1), member("r", "", 0)})
		require.Len(t, got, 3)
		require.Equal(t, "r", got[0].ProcessInstanceID)
		require.Equal(t, int64(2), got[0].SubtreeOpenIncidents)
	})

	t.Run("RootWithoutJobs", func(t *testing.T) {
		t.Parallel()
		got := treeOrder("r", []*TreeMember{member("a", "r", 0), member("b", "", 0)})
		require.Equal(t, []string{"0:a", "0:b"}, shape(got))
	})
}
