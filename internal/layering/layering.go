// Package layering holds the layering rule of riverbpmn's packages, which
// its test enforces: workflow is the front door with thin facades over the
// feature packages, and a feature package never imports workflow, directly
// or through another package. Only the packages built on top of the front
// door (AboveWorkflow) may.
package layering

// Module is riverbpmn's module path.
const Module = "github.com/riverbpmn/riverbpmn"

// Workflow is the front door's import path.
const Workflow = Module + "/workflow"

// AboveWorkflow are the packages built on top of the front door, which may
// import workflow: the tools, the user-facing helpers and the test and
// benchmark programs. Every other package of the module is a feature
// package (or one a feature package may use) and must not. The value says
// why the package may.
var AboveWorkflow = map[string]string{
	Module + "/cmd/riverbpmn":           "the CLI drives an engine",
	Module + "/console":                 "the console drives an engine",
	Module + "/examples/quickstart":     "an example program of the front door",
	Module + "/examples/timers":         "an example program of the front door",
	Module + "/handlers":                "worker helpers built on the engine's job contexts and driver",
	Module + "/riverbpmntest":           "the test helper sets up an engine and a client",
	Module + "/internal/bench":          "benchmarks run engines",
	Module + "/internal/controltest":    "a test program that runs a client",
	Module + "/internal/livenessworker": "a test program that runs a client",
	Module + "/internal/recordtest":     "a test helper that runs a client",
	Module + "/internal/testworker":     "a test program that runs a client",
	Module + "/internal/timerworker":    "a test program that runs a client",
	Module + "/workflow/compat":         "the compatibility suite of the front door",
	Module + "/internal/layering":       "this package names workflow only as text",
}
