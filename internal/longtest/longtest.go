// Package longtest marks the tests that belong to `make test-long`: stress
// runs, processes killed with SIGKILL, PostgreSQL restarts, tables of 100k
// rows and more, the EXPLAIN matrices over every plan, and benchmarks run as
// tests. `make test` proves behaviour in minutes on a busy machine; these
// prove the claims that need time or a quiet machine.
package longtest

import (
	"os"
	"testing"
)

// EnvVar is the environment variable that lets long tests run (any non-empty
// value). `make test-long` sets it.
const EnvVar = "RIVERBPMN_TEST_LONG"

// Enabled reports whether long tests run in this process.
func Enabled() bool { return os.Getenv(EnvVar) != "" }

// Skip skips t unless long tests are enabled, saying how to run it. Call it
// first in a test that belongs to `make test-long`.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test: runs in `make test-long` (%s=1)", EnvVar)
	}
}
