package liveness_test

import (
	"fmt"
	"time"

	"github.com/riverbpmn/riverbpmn/liveness"
)

// Liveness is on by default (workflow.Config.Liveness.Disabled opts out);
// the durations left zero take their defaults, and Validate refuses timings that would let a
// takeover start before a cut-off client has stopped.
func ExampleConfig() {
	cfg := liveness.Config{}
	d := cfg.WithDefaults()
	fmt.Println(d.PingInterval, d.FenceAfter, d.CancelGrace, d.TakeoverAfter, d.CheckInterval, d.StallAfter)

	fmt.Println(liveness.Config{FenceAfter: 5 * time.Second, TakeoverAfter: 4 * time.Second}.Validate())
	// Output:
	// 500ms 2s 1s 3s 1s 30s
	// liveness: Config.TakeoverAfter (4s) must be at least FenceAfter + CancelGrace (6s): a cut-off client must have stopped its jobs before they are given back
}
