package workflow

import (
	"context"
	"log/slog"
	"sync"
	"weak"
)

// How a client that retries riverbpmn jobs with another policy than the
// engine's is detected when it starts, instead of silently giving every job
// River's exponential backoff in place of its retry cycle.
//
// river.NewClient hands the client's archetype to the pilot (PilotInit), then
// to config.RetryPolicy if it embeds a riverBaseService
// (baseservice.Init copies the archetype's logger into it). The pilot gives
// the archetype a logger of its own (a new *slog.Logger on the same handler:
// it logs exactly as before), and RetryPolicy.GetBaseService records every
// base it hands River. When the client starts, the pilot looks for a recorded
// base holding its logger: found, the client's policy is a *RetryPolicy;
// not found, the client retries with another policy, and the pilot logs an
// error naming the fix.

// retryPolicyBases are the bases RetryPolicy.GetBaseService handed River,
// weakly: the policy holding one keeps it alive.
var retryPolicyBases struct {
	sync.Mutex
	bases []weak.Pointer[riverBaseService]
}

// GetBaseService is River's hook to give a retry policy its client's
// archetype (river.NewClient calls it); riverbpmn uses it to check, when a
// client starts, that the client's retries are this policy's. It returns a
// new base on each call, so one policy may serve several clients. It is not
// meant to be called otherwise.
func (p *RetryPolicy) GetBaseService() *riverBaseService {
	base := &riverBaseService{}
	retryPolicyBases.Lock()
	defer retryPolicyBases.Unlock()
	p.bases = append(p.bases, base)
	live := retryPolicyBases.bases[:0]
	for _, w := range retryPolicyBases.bases {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	retryPolicyBases.bases = append(live, weak.Make(base))
	return base
}

// retryPolicyOfLogger says whether a *RetryPolicy was given the archetype
// whose logger is logger.
func retryPolicyOfLogger(logger *slog.Logger) bool {
	retryPolicyBases.Lock()
	defer retryPolicyBases.Unlock()
	for _, w := range retryPolicyBases.bases {
		if base := w.Value(); base != nil && base.Logger == logger {
			return true
		}
	}
	return false
}

// markArchetype gives the client's archetype a logger of its own, on the
// same handler, before River initializes the client's retry policy with it
// (see above). The pilot keeps it to recognize the policy's base.
func (p *pilot) markArchetype(archetype *riverArchetype) {
	logger := archetype.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p.logger = slog.New(logger.Handler())
	archetype.Logger = p.logger
}

// retryPolicyNotWiredMessage is the error the pilot logs for a client whose
// retries are not the engine's.
const retryPolicyNotWiredMessage = "riverbpmn: this client's river.Config.RetryPolicy is not the engine's *workflow.RetryPolicy: " +
	"the retry cycles of riverbpmn jobs (JobDefinition.RetryCycle, such as R3/PT5M) are ignored and River's exponential backoff decides when they run again. " +
	"Build the client with workflow.NewClient(engine, config); a policy of your own for plain River jobs goes in workflow.RetryPolicy.Fallback"

// checkRetryPolicy runs when a client that works jobs starts: it logs an
// error when the client's retry policy is not a *RetryPolicy. The client
// still starts (plain River jobs, and riverbpmn jobs, run), but not silently.
func (p *pilot) checkRetryPolicy(ctx context.Context) {
	if p.logger == nil || retryPolicyOfLogger(p.logger) {
		return
	}
	p.logger.ErrorContext(ctx, retryPolicyNotWiredMessage)
}
