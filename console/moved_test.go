package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
)

// TestMovedRoutes: the pages and actions are at the paths that name the
// CLI's nouns (/exclusive/locks as `riverbpmn exclusive locks list`,
// /instances/ID, /suspensions, /sessions, /indexes, ...); each path of the
// previous release redirects there under the prefix, keeping the query: a
// page with 301, an action with 308 (the browser posts the form again), an
// old instance path to the instance its query or form names. An action
// posted to its old path still runs, through the redirect.
func TestMovedRoutes(t *testing.T) {
	e := newEnv(t)
	b := e.serve(&console.Options{Prefix: "/ops"})
	noFollow := &http.Client{Jar: b.http.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		method, old string
		form        url.Values
		status      int
		to          string
	}{
		{"GET", "/instance?id=pi-1&after=5", nil, http.StatusMovedPermanently, "/ops/instances/pi-1?after=5"},
		{"GET", "/instance?id=a%2Fb", nil, http.StatusMovedPermanently, "/ops/instances/a%2Fb"},
		{"GET", "/instance", nil, http.StatusMovedPermanently, "/ops/instances"},
		{"GET", "/instances?id=pi-1", nil, http.StatusSeeOther, "/ops/instances/pi-1"},
		{"GET", "/locks?after=pi-a", nil, http.StatusMovedPermanently, "/ops/exclusive/locks?after=pi-a"},
		{"GET", "/suspended", nil, http.StatusMovedPermanently, "/ops/suspensions"},
		{"GET", "/clients", nil, http.StatusMovedPermanently, "/ops/sessions"},
		{"GET", "/maintenance", nil, http.StatusMovedPermanently, "/ops/indexes"},
		{"POST", "/locks/delete-stale", url.Values{}, http.StatusPermanentRedirect, "/ops/exclusive/locks/delete-stale"},
		{"POST", "/locks/scope", url.Values{}, http.StatusPermanentRedirect, "/ops/exclusive/scope"},
		{"POST", "/suspended/7/apply", url.Values{}, http.StatusPermanentRedirect, "/ops/suspensions/7/apply"},
		{"POST", "/instance/stop", url.Values{"instance": {"pi-1"}}, http.StatusPermanentRedirect, "/ops/instances/pi-1/stop"},
		{"POST", "/instance/suspend", url.Values{"instance": {"pi-1"}}, http.StatusPermanentRedirect, "/ops/instances/pi-1/suspend"},
		{"POST", "/instance/activate", url.Values{"instance": {"pi-1"}}, http.StatusPermanentRedirect, "/ops/instances/pi-1/activate"},
		{"POST", "/instance/queue", url.Values{"instance": {"pi-1"}}, http.StatusPermanentRedirect, "/ops/instances/pi-1/queue"},
		{"POST", "/fairness/enable", url.Values{}, http.StatusPermanentRedirect, "/ops/indexes/fairness/enable"},
		{"POST", "/fairness/disable", url.Values{}, http.StatusPermanentRedirect, "/ops/indexes/fairness/disable"},
		{"POST", "/fetch-indexes/enable", url.Values{}, http.StatusPermanentRedirect, "/ops/indexes/fetch-order/enable"},
		{"POST", "/fetch-indexes/disable", url.Values{}, http.StatusPermanentRedirect, "/ops/indexes/fetch-order/disable"},
		{"POST", "/head-indexes/enable", url.Values{}, http.StatusPermanentRedirect, "/ops/exclusive/indexes/enable"},
		{"POST", "/head-indexes/disable", url.Values{}, http.StatusPermanentRedirect, "/ops/exclusive/indexes/disable"},
	} {
		var (
			resp *http.Response
			err  error
		)
		if tt.method == "GET" {
			resp, err = noFollow.Get(b.server.URL + "/ops" + tt.old)
		} else {
			resp, err = noFollow.PostForm(b.server.URL+"/ops"+tt.old, tt.form)
		}
		require.NoError(t, err, tt.old)
		resp.Body.Close()
		require.Equal(t, tt.status, resp.StatusCode, "%s %s", tt.method, tt.old)
		require.Equal(t, tt.to, resp.Header.Get("Location"), "%s %s", tt.method, tt.old)
	}

	// The new pages answer; an action posted to its old path runs.
	e.insert("pi-1", nil)
	for _, path := range []string{"/instances/pi-1", "/exclusive/locks", "/suspensions", "/sessions", "/indexes"} {
		status, body := b.get(path)
		require.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
	e.insert("pi-old-form", nil)
	_, body := b.submit("/instances/pi-old-form", "/instance/suspend", url.Values{"instance": {"pi-old-form"}})
	require.Contains(t, body, `Process instance &#34;pi-old-form&#34; suspended`)
	_, body = b.submit("/exclusive/locks", "/locks/delete-stale", nil)
	require.True(t, strings.Contains(body, "Deleted 0 stale or free exclusive lock rows."), body)
}
