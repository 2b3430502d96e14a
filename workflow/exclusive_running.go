package workflow

import (
	"context"
	"regexp"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// exclusiveRunningIndexes are the running-key indexes of the running-row
// mechanism (exclusive.RunningRow; sql/exclusive_running_index_create.sql),
// one per enforcing scope, created on demand.
var exclusiveRunningIndexes = newOnDemandIndexes("exclusive running-key index",
	[]string{exclusiveRunningIndex(exclusive.ProcessInstance), exclusiveRunningIndex(exclusive.RootProcessInstance)},
	regexp.MustCompile(`\briver_bpmn_job_exclusive_running_(instance|root)\b`),
	"exclusive_running_index_create.sql", "exclusive_running_index_drop.sql")

// exclusiveRunningIndex names the running-key index of scope.
func exclusiveRunningIndex(scope exclusive.Scope) string {
	if scope == exclusive.RootProcessInstance {
		return "river_bpmn_job_exclusive_running_root"
	}
	return "river_bpmn_job_exclusive_running_instance"
}

// EnableExclusiveRunningIndex creates, in the engine's schema, the
// running-key index of the engine's exclusive scope, which the running-row
// mechanism (Config.ExclusiveMechanism exclusive.RunningRow) probes to know
// whether a key is held. A client of that mechanism calls it when it
// starts. Idempotent; clients starting together build it once.
func (e *Engine) EnableExclusiveRunningIndex(ctx context.Context) error {
	if e.dbPool == nil {
		return errNoPool
	}
	if !e.config.ExclusiveScope.Enabled() {
		return nil
	}
	return exclusiveRunningIndexes.enable(ctx, e, []string{exclusiveRunningIndex(e.config.ExclusiveScope)})
}

// DisableExclusiveRunningIndexes drops the running-key indexes of every
// scope from the engine's schema.
func (e *Engine) DisableExclusiveRunningIndexes(ctx context.Context) error {
	return exclusiveRunningIndexes.disable(ctx, e)
}

// runningRow reports whether this pilot's engine enforces exclusivity with
// the running-row mechanism.
func (p *pilot) runningRow() bool {
	return p.exclusiveEnabled() && p.driver.engine.config.ExclusiveMechanism == exclusive.RunningRow
}
