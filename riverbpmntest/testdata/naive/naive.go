// Package naive is the wrapper riverbpmntest must not be: it calls
// riverdbtest.TestSchema itself, so the schemas of every package that uses
// it are named after it.
package naive

import (
	"context"
	"testing"

	"github.com/riverqueue/river/riverdbtest"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

// Schema returns a test schema made here.
func Schema(t *testing.T) string {
	return riverdbtest.TestSchema(context.Background(), t, riverbpmntest.Driver(t), nil)
}
