package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
)

// TestAuthorize: with Options.Authorize (Authorizer's basic auth and bearer
// token), a request without credentials or with wrong ones gets 401 and a
// basic-auth challenge; the viewer sees pages without forms and every POST
// of theirs is refused (403) and changes nothing; the operator, by password
// or by token, sees the forms and changes things; ReadOnly caps the
// operator to reading.
func TestAuthorize(t *testing.T) {
	e := newEnv(t)
	jobID := e.incident("pi-auth")
	auth := console.Authorizer(
		console.Credential{User: "ops", Secret: "op-secret", Access: console.AccessOperate},
		console.Credential{User: "viewer", Secret: "view-secret", Access: console.AccessRead},
		console.Credential{Secret: "token-123", Access: console.AccessOperate},
	)
	b := e.serve(&console.Options{Authorize: auth})
	do := func(method, path string, form url.Values, set func(*http.Request)) (int, http.Header) {
		t.Helper()
		var req *http.Request
		var err error
		if method == http.MethodPost {
			req, err = http.NewRequest(method, b.server.URL+path, stringsReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req, err = http.NewRequest(method, b.server.URL+path, nil)
			require.NoError(t, err)
		}
		if set != nil {
			set(req)
		}
		resp, err := b.http.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	bearer := func(token string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	}

	for name, set := range map[string]func(*http.Request){
		"none": nil, "wrong password": basic("ops", "nope"), "viewer's user with the operator's password": basic("viewer", "op-secret"),
		"wrong token": bearer("token-124"), "empty token": bearer(""),
	} {
		status, header := do(http.MethodGet, "/incidents", nil, set)
		require.Equal(t, http.StatusUnauthorized, status, name)
		require.Contains(t, header.Get("WWW-Authenticate"), `Basic realm="riverbpmn console"`, name)
		status, _ = do(http.MethodPost, "/jobs/1/retries", url.Values{"retries": {"1"}}, set)
		require.Equal(t, http.StatusUnauthorized, status, name)
	}

	// The viewer: pages, no forms, POST refused.
	viewer := e.serveWith(&console.Options{Authorize: auth}, basic("viewer", "view-secret"))
	status, body := viewer.get("/incidents")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "pi-auth")
	require.NotContains(t, body, `method="post"`)
	require.Contains(t, body, `<span class="mode">read-only</span>`)
	status, _ = viewer.post("/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"1"}})
	require.Equal(t, http.StatusForbidden, status)
	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1, "the viewer changed nothing")

	// The operator by token: forms, and the retry runs.
	operator := e.serveWith(&console.Options{Authorize: auth}, bearer("token-123"))
	_, body = operator.get("/incidents")
	require.Contains(t, body, `method="post"`)
	_, body = operator.submit("/incidents", "/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"1"}})
	require.Contains(t, body, "Job "+id(jobID)+": retries set to 1.")

	// The operator by password, on a read-only console: reads only.
	ro := e.serveWith(&console.Options{Authorize: auth, ReadOnly: true}, basic("ops", "op-secret"))
	_, body = ro.get("/incidents")
	require.NotContains(t, body, `method="post"`)
	status, _ = ro.post("/exclusive/locks/delete-stale", url.Values{})
	require.Equal(t, http.StatusForbidden, status)
}
