package notfound_test

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river/riverdbtest"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func TestErr(t *testing.T) {
	t.Parallel()

	// Every package's ErrNotFound is the one value, so errors.Is with any of
	// them answers alike for an error of any package.
	t.Run("OneValueInEveryPackage", func(t *testing.T) {
		t.Parallel()

		for name, err := range map[string]error{
			"workflow": workflow.ErrNotFound, "job": job.ErrNotFound, "definition": definition.ErrNotFound,
			"deployment": deployment.ErrNotFound, "incident": incident.ErrNotFound, "jobcontrol": jobcontrol.ErrNotFound,
			"timer": timer.ErrNotFound, "exclusive": exclusive.ErrNotFound, "events": events.ErrNotFound,
			"suspension": suspension.ErrNotFound, "lifecycle": lifecycle.ErrNotFound, "bulk": bulk.ErrNotFound,
		} {
			if err != notfound.Err { //nolint:errorlint // the identity is the property
				t.Errorf("%s.ErrNotFound is %p (%q), not the one not-found error %p", name, err, err, notfound.Err)
			}
		}
	})

	// An unknown id given to a handle is one error that every package's
	// ErrNotFound matches: a feature package's own and the engine's.
	t.Run("HandleErrorsMatchEveryPackage", func(t *testing.T) {
		t.Parallel()

		ctx := context.Background()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		engine := riverbpmntest.New(ctx, t, schema, nil).Engine
		const unknown = int64(1) << 60

		_, timerErr := engine.Timers().Get(ctx, unknown)
		_, jobErr := engine.Jobs().Status(ctx, unknown)
		_, waitErr := engine.Exclusive().Wait(ctx, unknown)
		_, defErr := engine.Definitions().Get(ctx, "no-such-job-definition")
		for name, err := range map[string]error{"Timers().Get": timerErr, "Jobs().Status": jobErr, "Exclusive().Wait": waitErr, "Definitions().Get": defErr} {
			for pkg, sentinel := range map[string]error{"workflow": workflow.ErrNotFound, "job": job.ErrNotFound, "timer": timer.ErrNotFound, "definition": definition.ErrNotFound} {
				if !errors.Is(err, sentinel) {
					t.Errorf("%s of an unknown id: %v, which is not %s.ErrNotFound", name, err, pkg)
				}
			}
		}
	})
}
