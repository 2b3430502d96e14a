package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
)

// AdvisoryLockClassJobDefinition is the first key of the two-key advisory
// lock that serialises setting a job definition's overriding priority with
// inserting its jobs (definition.AdvisoryLockClass).
const AdvisoryLockClassJobDefinition = definition.AdvisoryLockClass

// CascadeBatchSize is how many jobs one transaction of a cascade rewrites.
const CascadeBatchSize = definition.CascadeBatchSize

// MaxJobDefinitions caps how many job definitions JobDefinitions returns.
const MaxJobDefinitions = 10_000

// JobDefinitionState is a job definition as stored, with its run-time state.
type JobDefinitionState = definition.State

// JobDefinitionSummary is a job definition with its run-time state, as
// JobDefinitions lists it.
type JobDefinitionSummary = definition.Summary

// CascadeResult reports what a cascade did.
type CascadeResult = definition.CascadeResult

// Definitions returns the handle on the schema's job definitions (package
// definition): List pages through them with their run-time state
// (overriding priority, suspension, unfinished jobs, open incidents),
// including those declared in Config.JobDefinitions that no client has
// stored yet; Get reads one; Sync stores the declared ones (clients on the
// engine's driver do when they start); SetOverridingPriority and
// ClearOverridingPriority set and clear a definition's overriding priority.
func (e *Engine) Definitions() *definition.Definitions { return e.definitions.get(e.newDefinitions) }

// newDefinitions makes the engine's definitions handle.
func (e *Engine) newDefinitions() *definition.Definitions {
	declared := make([]definition.Declared, len(e.config.JobDefinitions))
	for i, def := range e.config.JobDefinitions {
		declared[i] = definition.Declared{ID: def.ID, ProcessDefinitionKey: def.ProcessDefinitionKey, ActivityID: def.ActivityID, Kind: def.Kind}
	}
	return definition.New(definition.Config{DB: e.db(), Schema: e.config.Schema, Declared: declared,
		DeployedAmong: func(ctx context.Context, ids []string) (map[string]string, error) {
			return e.Deployments().DeployedAmong(ctx, ids)
		}})
}

// SyncJobDefinitions stores the declared job definitions, keeping the
// run-time state of those already stored.
//
// Deprecated: use [Engine.Definitions] and [definition.Definitions.Sync].
func (e *Engine) SyncJobDefinitions(ctx context.Context) error {
	err := e.Definitions().Sync(ctx)
	var deployed *definition.DeployedIDError
	if errors.As(err, &deployed) {
		// The error this call has always returned, as NewEngine's.
		return &DefinitionError{Definition: fmt.Sprintf("job definition %q", deployed.ID), Field: "ID", Value: deployed.ID,
			Problem: fmt.Sprintf("is the id of a job definition of deployment %s: declare another id, or use the deployed one", deployed.Deployment)}
	}
	return err
}

// SetOverridingJobPriority gives job definition jobDefinitionID the
// overriding priority p, with cascade rewriting its unfinished and
// discarded jobs too. An id that is neither declared nor stored gives an
// error naming it that wraps ErrNotFound.
//
// Deprecated: use [Engine.Definitions] and
// [definition.Definitions.SetOverridingPriority].
func (e *Engine) SetOverridingJobPriority(ctx context.Context, jobDefinitionID string, p int64, cascade bool) error {
	_, err := e.Definitions().SetOverridingPriority(ctx, jobDefinitionID, p, cascade)
	return err
}

// ClearOverridingJobPriority removes job definition jobDefinitionID's
// overriding priority.
//
// Deprecated: use [Engine.Definitions] and
// [definition.Definitions.ClearOverridingPriority].
func (e *Engine) ClearOverridingJobPriority(ctx context.Context, jobDefinitionID string) error {
	return e.Definitions().ClearOverridingPriority(ctx, jobDefinitionID)
}

// JobDefinition returns a job definition with its current overriding
// priority and whether it is suspended.
//
// Deprecated: use [Engine.Definitions] and [definition.Definitions.Get].
func (e *Engine) JobDefinition(ctx context.Context, jobDefinitionID string) (*JobDefinitionState, error) {
	state, err := e.Definitions().Get(ctx, jobDefinitionID)
	return state, err
}

// JobDefinitions returns the job definitions (at most MaxJobDefinitions, by
// id) with their run-time state, those declared in this engine's Config
// that are not stored yet included.
//
// Deprecated: use [Engine.Definitions] and [definition.Definitions.List].
func (e *Engine) JobDefinitions(ctx context.Context) ([]*JobDefinitionSummary, error) {
	return allPages(MaxJobDefinitions, func(after string) ([]*JobDefinitionSummary, string, error) {
		res, err := e.Definitions().List(ctx, &definition.ListParams{Limit: listpage.MaxLimit, After: after})
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	})
}

// JobDefinitionsPage returns the job definitions whose id sorts after
// afterID ("" for the first page), by id, at most limit, with their
// run-time state: the paged form of JobDefinitions.
//
// Deprecated: use [Engine.Definitions] and [definition.Definitions.List].
func (e *Engine) JobDefinitionsPage(ctx context.Context, afterID string, limit int) ([]*JobDefinitionSummary, error) {
	res, err := e.Definitions().List(ctx, &definition.ListParams{Limit: limit, After: afterID})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// sql renders one of our SQL files for the engine's schema.
func (e *Engine) sql(tmpl string) string { return renderSQL(tmpl, e.config.Schema) }
