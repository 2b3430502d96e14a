package handlers_test

import (
	"fmt"

	"github.com/riverbpmn/riverbpmn/handlers"
)

// Timer definitions are checked when they are defined; errors name the
// value.
func ExampleTimer_Validate() {
	for _, tm := range []handlers.Timer{
		{Cycle: "R3/PT10H"},
		{Cycle: "0 0 9 ? * MON-FRI"},
		{Cycle: "R0/PT1H"},
		{Date: "2026-02-30T09:00:00Z"},
		{Duration: "PT5.5M"},
	} {
		fmt.Println(tm.Validate())
	}
	// Output:
	// <nil>
	// <nil>
	// timer: invalid time cycle "R0/PT1H": zero repetitions (R0): the timer would never fire; use R1 or more, or R for unbounded
	// timer: invalid time date "2026-02-30T09:00:00Z": day 30 out of range for 2026-02
	// timer: invalid time duration "PT5.5M": fraction allowed only on seconds
}
