package pkga_test

import (
	"context"
	"os"
	"testing"

	"github.com/riverqueue/river/riverdbtest"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/riverbpmntest/testdata/naive"
	"github.com/riverbpmn/riverbpmn/riverbpmntest/testdata/shared"
)

// TestHoldSchema is run by riverbpmntest's TestParallelPackages: its schema
// comes from this package's own riverdbtest.TestSchema call, as
// riverbpmntest documents, or, with RIVERBPMNTEST_MODE=naive, from a
// wrapper package.
func TestHoldSchema(t *testing.T) {
	var schema string
	if os.Getenv("RIVERBPMNTEST_MODE") == "naive" {
		schema = naive.Schema(t)
	} else {
		schema = riverdbtest.TestSchema(context.Background(), t, riverbpmntest.Driver(t), nil)
	}
	shared.HoldSchema(t, schema)
}
