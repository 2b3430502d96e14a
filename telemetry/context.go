package telemetry

import (
	"bytes"
	"encoding/json"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
)

// ContextReader is the JobReader of riverbpmn's engine: it reads a job's
// identity from its job context in River's metadata (workflow.MetadataKey),
// in every stored form, as the SQL accessors of migration riverbpmn/028 read
// single fields; a job whose context cannot be read is a plain job to it.
// The labelled form and the array form with plain strings are read in one
// pass without building maps, and Class reads them without allocating; any
// other form is read the general way.
type ContextReader struct {
	// Scope is the engine's exclusive scope (workflow.Config.ExclusiveScope),
	// under which a job takes its exclusive key or none.
	Scope exclusive.Scope
}

var _ JobReader = ContextReader{}

// Identity reads a job's whole identity.
func (r ContextReader) Identity(job *rivertype.JobRow) Identity {
	var c jobctx.Text
	found, ok := jobctx.Read(job.Metadata, &c)
	if ok && !found {
		return Identity{} // a plain River job
	}
	if ok {
		return r.identityFrom(func(position int) string { return string(c.Texts[position]) }, c.Exclusive)
	}
	fields, found, err := jobctx.FromMetadata(job.Metadata)
	if !found || err != nil {
		return Identity{}
	}
	return r.identityOf(fields.Field)
}

// identityOf builds an identity from a reader of the context's fields
// (jobctx.Fields.Field), the general reader.
func (r ContextReader) identityOf(field func(name string) json.RawMessage) Identity {
	str := func(position int) string {
		raw := field(jobctx.Names[position])
		if s, ok := jobctx.PlainString(raw); ok {
			return s
		}
		var s string
		if raw != nil && json.Unmarshal(raw, &s) == nil {
			return s // a string with escapes
		}
		return "" // absent, null or not a string
	}
	return r.identityFrom(str, bytes.Equal(bytes.TrimSpace(field("exclusive")), []byte("true")))
}

// identityFrom builds an identity from the string fields of a context by
// position (jobctx.Names, "" for what is not a string) and its exclusive
// flag.
func (r ContextReader) identityFrom(str func(position int) string, exclusiveFlag bool) Identity {
	id := Identity{
		HasContext:           true,
		ProcessInstanceID:    str(jobctx.Instance),
		ActivityID:           str(jobctx.Activity),
		JobDefinitionID:      str(jobctx.Job),
		ProcessDefinitionKey: str(jobctx.Process),
		TenantID:             str(jobctx.Tenant),
		RetryCycle:           str(jobctx.Retry),
		Timer:                str(jobctx.Type) == jobctx.TypeTimer,
	}
	root := str(jobctx.Root)
	if root == "" {
		root = id.ProcessInstanceID
	}
	id.ExclusiveKey, _ = exclusive.Key(r.Scope, exclusiveFlag, id.ProcessInstanceID, root)
	return id
}

// Class reads the bounded part of a job's identity, what Identity reads
// (ClassOf), without allocating: its byte slices are parts of the job's
// metadata. A context the one-pass reader cannot read is read by Identity.
func (r ContextReader) Class(job *rivertype.JobRow) Class {
	var c jobctx.Text
	found, ok := jobctx.Read(job.Metadata, &c)
	if !ok {
		return ClassOf(r.Identity(job))
	}
	if !found {
		return Class{} // a plain River job
	}
	// exclusive.Key decides whether the job takes a key: it needs to know
	// only which identifiers are empty.
	nonEmpty := func(text []byte) string {
		if len(text) == 0 {
			return ""
		}
		return "x"
	}
	root := c.Texts[jobctx.Root]
	if len(root) == 0 {
		root = c.Texts[jobctx.Instance]
	}
	_, takesKey := exclusive.Key(r.Scope, c.Exclusive, nonEmpty(c.Texts[jobctx.Instance]), nonEmpty(root))
	return Class{
		HasContext:           true,
		Timer:                string(c.Texts[jobctx.Type]) == jobctx.TypeTimer,
		Exclusive:            takesKey,
		JobDefinitionID:      c.Texts[jobctx.Job],
		ProcessDefinitionKey: c.Texts[jobctx.Process],
		TenantID:             c.Texts[jobctx.Tenant],
		RetryCycle:           c.Texts[jobctx.Retry],
	}
}
