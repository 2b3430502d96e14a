package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestTimersPage: every timer, of an instance and a timer start event (no
// instance), with its next due date and repetitions left; filtered by
// activity, start events and due window; Cancel asks first.
func TestTimersPage(t *testing.T) {
	e := newEnv(t)
	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	insert := func(jc workflow.JobContext, cycle string) int64 {
		tx, err := e.pool.Begin(e.ctx)
		require.NoError(t, err)
		timer, err := timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: cycle}, jc.InsertOpts())
		if err != nil {
			_ = tx.Rollback(e.ctx)
		}
		require.NoError(t, err)
		require.NoError(t, tx.Commit(e.ctx))
		return timer.TimerID
	}
	inInstance := insert(workflow.JobContext{ProcessInstanceID: "pi-t", ProcessDefinitionKey: "order", ActivityID: "reminder"}, "R3/PT1H")
	startEvent := insert(workflow.JobContext{ProcessDefinitionKey: "order", ActivityID: "nightly"}, "R/P1D")
	b := e.serve(nil)

	status, body := b.get("/timers")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, inInstance))
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent))
	require.Contains(t, body, "<em>start event</em>")
	require.Contains(t, body, "<td class=\"num\">unbounded</td>")

	_, body = b.get("/timers?start_events=1")
	require.NotContains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, inInstance))
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent))
	_, body = b.get("/timers?activity=reminder")
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, inInstance))
	require.NotContains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent))
	soon := time.Now().UTC().Add(2 * time.Hour).Format("2006-01-02T15:04")
	_, body = b.get("/timers?due_before=" + url.QueryEscape(soon))
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, inInstance), "due in an hour")
	require.NotContains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent), "due in a day")
	require.Contains(t, body, `<p class="total" id="timers-total">1 timers.</p>`)
	other := insert(workflow.JobContext{ProcessInstanceID: "pi-u", ProcessDefinitionKey: "order", ActivityID: "reminder"}, "R2/PT1H")
	// Its job of another process definition (only "order" is declared).
	_, err := e.pool.Exec(e.ctx, `UPDATE `+pgxIdent(e.schema)+`.river_job SET metadata = `+pgxIdent(e.schema)+
		`.river_bpmn_ctx_set(metadata, 1, 'process_definition_key', '"refund"') WHERE id = (SELECT job_id FROM `+
		pgxIdent(e.schema)+`.river_bpmn_timer WHERE id = $1)`, other)
	require.NoError(t, err)
	_, body = b.get("/timers?process_definition=refund")
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, other))
	require.NotContains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, inInstance))
	require.Contains(t, body, `<p class="total" id="timers-total">1 timers.</p>`)
	_, body = b.get("/timers")
	require.Contains(t, body, `<p class="total" id="timers-total">3 timers.</p>`)
	status, _ = b.get("/timers?due_from=tomorrow")
	require.Equal(t, http.StatusBadRequest, status)

	ask, _, body := b.confirm("/timers", fmt.Sprintf("/timers/%d/cancel", startEvent), nil, false)
	require.Contains(t, ask, "a timer start event (no process instance)")
	require.Contains(t, body, fmt.Sprintf("Timer %d cancelled", startEvent))
	_, body = b.get("/timers")
	require.NotContains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent), "ended: listed only with ended")
	_, body = b.get("/timers?ended=1")
	require.Contains(t, body, fmt.Sprintf(`<tr id="timer-%d">`, startEvent))
}
