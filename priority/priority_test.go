package priority_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

type orderArgs struct {
	CustomerStatus string `json:"customer_status"`
}

func (orderArgs) Kind() string { return "order" }

type otherArgs struct{}

func (otherArgs) Kind() string { return "other" }

func vip(args orderArgs) int64 {
	if args.CustomerStatus == "VIP" {
		return 10
	}
	return 0
}

func TestConstant(t *testing.T) {
	t.Parallel()
	for _, p := range []int64{math.MinInt64, -1, 0, 7, math.MaxInt64} {
		got, err := priority.Constant(p).Priority(otherArgs{})
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	require.Equal(t, "constant -5", priority.Constant(-5).String())
}

func TestFromArgs(t *testing.T) {
	t.Parallel()
	source := priority.FromArgs(vip)

	got, err := source.Priority(orderArgs{CustomerStatus: "VIP"})
	require.NoError(t, err)
	require.Equal(t, int64(10), got)

	got, err = source.Priority(&orderArgs{CustomerStatus: "regular"})
	require.NoError(t, err)
	require.Equal(t, int64(0), got)

	_, err = source.Priority(otherArgs{})
	require.EqualError(t, err, "priority: priority function of priority_test.orderArgs cannot compute the priority of args of type priority_test.otherArgs")

	_, err = source.Priority((*orderArgs)(nil))
	require.Error(t, err)
}

// ExampleFromArgs gives VIP customers' orders priority 10, the rest 0.
func ExampleFromArgs() {
	source := priority.FromArgs(func(args orderArgs) int64 {
		if args.CustomerStatus == "VIP" {
			return 10
		}
		return 0
	})
	for _, status := range []string{"VIP", "regular"} {
		p, _ := source.Priority(orderArgs{CustomerStatus: status})
		fmt.Println(status, p)
	}
	// Output:
	// VIP 10
	// regular 0
}

func TestRange(t *testing.T) {
	t.Parallel()
	require.NoError(t, priority.Range{Min: 3, Max: 3}.Validate())
	require.NoError(t, priority.Range{Min: math.MinInt64, Max: math.MaxInt64}.Validate())
	require.EqualError(t, priority.Range{Min: 5, Max: 4}.Validate(), "priority: range min 5 is greater than max 4")

	r := priority.Range{Min: -10, Max: 10}
	require.True(t, r.Contains(-10))
	require.True(t, r.Contains(10))
	require.False(t, r.Contains(11))
	require.False(t, r.Contains(-11))
	require.Equal(t, "[-10, 10]", r.String())
}
