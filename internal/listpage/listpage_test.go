package listpage

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListPage: the limit defaults and is bounded, Trim gives a cursor
// exactly when more rows than the page came back, and a cursor reads back
// to its id while a foreign one is refused naming the field and the value.
func TestListPage(t *testing.T) {
	t.Parallel()

	t.Run("Limit", func(t *testing.T) {
		t.Parallel()
		n, err := Limit("timer", 0)
		require.NoError(t, err)
		require.Equal(t, DefaultLimit, n)
		n, err = Limit("timer", MaxLimit)
		require.NoError(t, err)
		require.Equal(t, MaxLimit, n)
		_, err = Limit("timer", MaxLimit+1)
		require.ErrorContains(t, err, "timer: ListParams.Limit must be 0 (default 100) to 1000, got 1001")
		_, err = Limit("timer", -1)
		require.ErrorContains(t, err, "got -1")
	})

	t.Run("Trim", func(t *testing.T) {
		t.Parallel()
		cursor := func(i int) string { return strconv.Itoa(i) }
		items, next := Trim([]int{1, 2, 3}, 3, cursor)
		require.Equal(t, []int{1, 2, 3}, items)
		require.Empty(t, next)
		items, next = Trim([]int{1, 2, 3, 4}, 3, cursor)
		require.Equal(t, []int{1, 2, 3}, items)
		require.Equal(t, "3", next)
		require.Equal(t, 4, Fetch(3))
	})

	t.Run("ID", func(t *testing.T) {
		t.Parallel()
		id, err := ParseID("bulk", ID(42))
		require.NoError(t, err)
		require.EqualValues(t, 42, id)
		id, err = ParseID("bulk", "")
		require.NoError(t, err)
		require.Zero(t, id)
		_, err = ParseID("bulk", "12:3")
		require.ErrorContains(t, err, `bulk: ListParams.After "12:3" is not a cursor`)
	})
}
