package workflow

import "github.com/riverbpmn/riverbpmn/internal/longtest"

// inShortSample reports whether a test matrix checks combination ci under
// variant vi (of n variants, e.g. exclusive scopes) in this run: every one
// under every variant in `make test-long`, and in `make test` every
// combination under one variant in turn, so that each combination and each
// variant is still checked, in a third of the time for three variants.
func inShortSample(ci, vi, n int) bool {
	return longtest.Enabled() || ci%n == vi
}
