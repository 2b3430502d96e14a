package exclusive

import "fmt"

// Mechanism is how exclusivity is enforced: which record says that a key is
// held. Both enforce the same invariant (doc.go); they differ in what a
// fetch reads and writes.
type Mechanism int

const (
	// LockTable holds a key in a row of river_bpmn_exclusive_lock, written
	// by the fetch that takes the key and given back by the work middleware
	// (doc.go, "Invariant"). The zero value.
	LockTable Mechanism = iota
	// RunningRow holds a key exactly while a job of the key is running in
	// River's own table: no lock row is written or given back. A fetch runs
	// two statements in one transaction, the first taking a transaction
	// advisory lock per candidate key, the second taking each locked key's
	// head with a fresh snapshot only if no job of the key runs (doc.go,
	// "The key held by River's own row"). Needs the running-key index of the
	// scope in force, which a client's start creates.
	RunningRow
)

// String names the mechanism as configurations and reports spell it.
func (m Mechanism) String() string {
	switch m {
	case LockTable:
		return "lock-table"
	case RunningRow:
		return "running-row"
	default:
		return fmt.Sprintf("Mechanism(%d)", int(m))
	}
}

// Valid reports whether m is one of the mechanisms above.
func (m Mechanism) Valid() bool { return m == LockTable || m == RunningRow }
