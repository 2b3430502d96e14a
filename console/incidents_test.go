package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestIncidentsLikeCockpit: incidents filtered by error text, age and
// process definition, grouped by error, resolved ones listed on demand, and
// a bulk retry of every open incident a filter matches, asked first with
// its count.
func TestIncidentsLikeCockpit(t *testing.T) {
	e := newEnv(t)
	a, bID, c := e.incident("pi-a"), e.incident("pi-b"), e.incident("pi-c")
	setMessage := func(jobID int64, msg string) {
		_, err := e.pool.Exec(e.ctx, "UPDATE "+pgx.Identifier{e.schema, "river_bpmn_incident"}.Sanitize()+" SET message = $2 WHERE job_id = $1", jobID, msg)
		require.NoError(t, err)
	}
	setMessage(a, "payment service answered 503\nat charge()")
	setMessage(bID, "payment service answered 503\nat refund()")
	setMessage(c, "timeout talking to the ledger")
	b := e.serve(nil)

	_, body := b.get("/incidents?error=answered+503")
	require.Contains(t, body, "2 open incident(s) match.")
	require.Equal(t, 2, countOf(body, `<tr id="incident-`))
	require.NotContains(t, body, "pi-c")
	_, body = b.get("/incidents?process_definition=order&older_than=1h")
	require.Contains(t, body, "0 open incident(s) match.")
	_, body = b.get("/incidents?process_definition=order&order=newest")
	require.Contains(t, body, "3 open incident(s) match.")
	status, body := b.get("/incidents?older_than=soon")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "older_than &#34;soon&#34; is not a duration")

	_, body = b.get("/incidents?group=1")
	require.Contains(t, body, `id="incident-groups"`)
	require.Regexp(t, `payment service answered 503</a></td><td class="num">2</td>`, body)
	require.Regexp(t, `timeout talking to the ledger</a></td><td class="num">1</td>`, body)

	// Resolved: listed only on demand.
	_, _ = b.submit("/incidents", "/jobs/"+id(c)+"/retries", url.Values{"retries": {"1"}})
	_, body = b.get("/incidents")
	require.Equal(t, 2, countOf(body, `<tr id="incident-`))
	_, body = b.get("/incidents?resolved=1")
	require.Equal(t, 3, countOf(body, `<tr id="incident-`))
	require.Contains(t, body, "<td><strong>open</strong></td>")

	// Bulk retry of every open incident matching error=503: the count first.
	_, page := b.get("/incidents?error=503")
	form := url.Values{"csrf": {b.token(page)}, "scope": {"all"}, "retries": {"1"}, "error": {"503"}, "return": {"/incidents?error=503"}}
	_, ask := b.post("/bulk/retry", form)
	require.Contains(t, ask, ">Retry 2 incident(s)</button>")
	require.Contains(t, ask, "Retry (1 retries) every open incident matching error=503")
	form.Set("confirmed", "yes")
	_, loc := b.postNoRedirect("/bulk/retry", form)
	require.Contains(t, waitBulk(t, b, loc), "2 of 2 done, 2 changed")
	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Empty(t, open)
}
