package priority

import "fmt"

// Range is an executor's inclusive priority range [Min, Max]: a client
// acquiring by priority fetches only jobs whose priority lies in it, so that
// for instance one group of nodes works urgent short jobs and another the
// rest. Adjacent ranges of several clients ([0, 9] and [10, MaxInt64]) split
// a workload with no overlap.
type Range struct {
	Min int64
	Max int64
}

// Validate reports a range whose Min is greater than its Max, naming both.
func (r Range) Validate() error {
	if r.Min > r.Max {
		return fmt.Errorf("priority: range min %d is greater than max %d", r.Min, r.Max)
	}
	return nil
}

// Contains reports whether p lies in the range.
func (r Range) Contains(p int64) bool { return r.Min <= p && p <= r.Max }

// String formats the range as [min, max].
func (r Range) String() string { return fmt.Sprintf("[%d, %d]", r.Min, r.Max) }
