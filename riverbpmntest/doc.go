// Package riverbpmntest sets up riverbpmn for a test: an engine and a client
// on a test schema that riverdbtest.TestSchema made and migrated with both
// migration lines (River's and riverbpmn's). It is to riverbpmn what
// riverdbtest is to River, and its engine and client work with rivertest's
// helpers (rivertest.RequireInserted and the others, with *workflow.Driver
// as the driver type).
//
// A test makes its schema with its own riverdbtest.TestSchema call, on
// Driver, and hands it to New:
//
//	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
//	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
//
// The call to riverdbtest.TestSchema stays in the test's package on
// purpose: riverdbtest names the schemas of a test binary after the package
// that first calls it, and at that first call drops the "expired" schemas
// of that name made by earlier binaries. Were the call made in this
// package, the schemas of every package would share one name, and one test
// binary could drop the schemas another test binary running in parallel
// (go test -p 2) still uses.
//
// Driver and New connect to the test database as River's test helpers do
// (riversharedtest.DBPool): TEST_DATABASE_URL, or River's default
// postgres://localhost:5432/river_test.
package riverbpmntest
