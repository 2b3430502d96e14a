package retrypolicy_test

import (
	"fmt"
	"time"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

func ExampleParseCycle() {
	failedAt := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)

	c, err := retrypolicy.ParseCycle("R5/PT5M")
	if err != nil {
		panic(err)
	}
	n, unbounded := c.Executions()
	fmt.Println(c, n, unbounded)
	fmt.Println(c.NextRetryAt(failedAt, 5).Format(time.RFC3339))

	list, err := retrypolicy.ParseCycle("PT10M, PT17M, P1M")
	if err != nil {
		panic(err)
	}
	n, _ = list.Executions()
	fmt.Println(list, n)
	for left := n; left >= 1; left-- {
		fmt.Println(left, list.NextRetryAt(failedAt, left).Format(time.RFC3339))
	}

	_, err = retrypolicy.ParseCycle("PT5.5M")
	fmt.Println(err)
	// Output:
	// R5/PT5M 5 false
	// 2026-01-31T10:05:00Z
	// PT10M,PT17M,P1M 4
	// 4 2026-01-31T10:10:00Z
	// 3 2026-01-31T10:17:00Z
	// 2 2026-02-28T10:00:00Z
	// 1 2026-02-28T10:00:00Z
	// retrypolicy: invalid retry cycle "PT5.5M": fraction allowed only on seconds
}

func ExampleRepeatingInterval_Next() {
	ri, err := retrypolicy.ParseRepeatingInterval("R3/2026-01-31T10:00:00Z/P1M")
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for {
		next, ok := ri.Next(time.Time{}, now)
		if !ok {
			fmt.Println("finished")
			break
		}
		fmt.Println(next.Format(time.RFC3339))
		now = next
	}
	// Output:
	// 2026-01-31T10:00:00Z
	// 2026-02-28T10:00:00Z
	// 2026-03-31T10:00:00Z
	// 2026-04-30T10:00:00Z
	// finished
}

func ExampleDuration_AddTo() {
	d, err := retrypolicy.ParseDuration("P1M")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.AddTo(time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)).Format(time.DateOnly))
	fmt.Println(d.AddTo(time.Date(2024, 1, 31, 10, 0, 0, 0, time.UTC)).Format(time.DateOnly))
	fmt.Println(d.SubtractFrom(time.Date(2026, 3, 31, 10, 0, 0, 0, time.UTC)).Format(time.DateOnly))
	// Output:
	// 2026-02-28
	// 2024-02-29
	// 2026-02-28
}
