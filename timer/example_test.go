package timer_test

import (
	"fmt"
	"time"

	"github.com/riverbpmn/riverbpmn/timer"
)

// The due dates of a cycle anchored at its creation, fired on time.
func ExampleDefinition_Next() {
	created := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	def, err := timer.Parse(timer.TypeCycle, "R3/PT10H")
	if err != nil {
		panic(err)
	}
	o, ok := def.First(created)
	for ok {
		fmt.Println(o.At.Format(time.RFC3339), "left:", o.Left)
		o, ok = def.Next(created, o.At, 0)
	}
	// Output:
	// 2026-01-01T18:00:00Z left: 2
	// 2026-01-02T04:00:00Z left: 1
	// 2026-01-02T14:00:00Z left: 0
}

// Cron expressions are read the Spring way (Camunda 7.24): six fields,
// seconds first, 5 = Friday, L = last.
func ExampleParseCron() {
	c, err := timer.ParseCron("0 30 17 ? * 5L") // 17:30 on the last Friday of the month
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		t, _ = c.Next(t)
		fmt.Println(t.Format("Mon 2006-01-02 15:04"))
	}
	_, err = timer.Parse(timer.TypeCycle, "0 30 17 * *")
	fmt.Println(err)
	// Output:
	// Fri 2026-01-30 17:30
	// Fri 2026-02-27 17:30
	// Fri 2026-03-27 17:30
	// timer: invalid time cycle "0 30 17 * *": 5 fields; Camunda reads Spring's 6 fields: second minute hour day-of-month month day-of-week
}
