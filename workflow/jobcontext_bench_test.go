package workflow

import (
	"context"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

// benchJobContext is a job context as an application gives it at insert:
// an instance, its process and activity, a deployment, a priority, a tenant.
func benchJobContext() JobContext {
	p, exclusive := int64(50), true
	return JobContext{
		ProcessInstanceID: "order-4711", ProcessDefinitionKey: "invoice", ActivityID: "approve",
		DeploymentID: "dep-7", JobType: JobTypeAsync, Priority: &p, Exclusive: &exclusive, TenantID: "acme",
	}
}

// BenchmarkPrepareInsert measures the Go work the insert middleware does per
// job: find the context in the metadata, decode and validate it, resolve it
// against the declarations and store it back in the compact form.
func BenchmarkPrepareInsert(b *testing.B) {
	engine, err := NewEngine(nil, &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "invoice", DeploymentID: "dep-7"}},
		JobDefinitions: []JobDefinition{{
			ID: "invoice:approve", ProcessDefinitionKey: "invoice", ActivityID: "approve", Kind: "bench",
			Priority: priority.Constant(10),
		}},
	})
	require.NoError(b, err)
	metadata := benchJobContext().InsertOpts().Metadata
	b.ReportAllocs()
	for b.Loop() {
		params := &rivertype.JobInsertParams{Kind: "bench", Metadata: metadata}
		if err := engine.prepareInsert(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJobContextOf measures reading a stored context back, as the work
// middleware and a worker do.
func BenchmarkJobContextOf(b *testing.B) {
	metadata := benchJobContext().InsertOpts().Metadata
	job := &rivertype.JobRow{ID: 1, Metadata: []byte(`{"river:log":[],"output":{"n":1},` + string(metadata[1:]))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JobContextOf(job); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExclusiveKeyOf measures finding a job's exclusive key in its
// metadata, which the work middleware does for every exclusive job.
func BenchmarkExclusiveKeyOf(b *testing.B) {
	metadata := benchJobContext().InsertOpts().Metadata
	job := &rivertype.JobRow{ID: 1, Metadata: metadata}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ExclusiveKeyOf(job, exclusive.ProcessInstance); !ok {
			b.Fatal("no key")
		}
	}
}
