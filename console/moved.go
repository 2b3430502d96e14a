package console

// The previous release's paths of pages and actions: each redirects to the
// path that names the same noun as the CLI (/locks is /exclusive/locks as
// `riverbpmn exclusive locks list`, /instance?id=ID is /instances/ID, ...),
// a page with 301 Moved Permanently, an action with 308 Permanent Redirect
// (the browser posts the form again, to the new path). Kept one release.

import (
	"net/http"
	"net/url"
	"strings"
)

// movedRoute is an old path and where it went. In to, {id} is the old
// path's id; for the old instance paths, which had none, it is the
// instance the query's "id" (a page) or the form's "instance" field (an
// action) names.
type movedRoute struct {
	method, old, to string
}

// movedRoutes are the old paths, by the release that moved them.
var movedRoutes = []movedRoute{
	{"GET", "/instance", "/instances/{id}"},
	{"GET", "/locks", "/exclusive/locks"},
	{"GET", "/suspended", "/suspensions"},
	{"GET", "/clients", "/sessions"},
	{"GET", "/maintenance", "/indexes"},
	{"POST", "/locks/delete-stale", "/exclusive/locks/delete-stale"},
	{"POST", "/locks/scope", "/exclusive/scope"},
	{"POST", "/suspended/{id}/apply", "/suspensions/{id}/apply"},
	{"POST", "/instance/stop", "/instances/{id}/stop"},
	{"POST", "/instance/suspend", "/instances/{id}/suspend"},
	{"POST", "/instance/activate", "/instances/{id}/activate"},
	{"POST", "/instance/queue", "/instances/{id}/queue"},
	{"POST", "/fairness/enable", "/indexes/fairness/enable"},
	{"POST", "/fairness/disable", "/indexes/fairness/disable"},
	{"POST", "/fetch-indexes/enable", "/indexes/fetch-order/enable"},
	{"POST", "/fetch-indexes/disable", "/indexes/fetch-order/disable"},
	{"POST", "/head-indexes/enable", "/exclusive/indexes/enable"},
	{"POST", "/head-indexes/disable", "/exclusive/indexes/disable"},
}

// moved redirects a request on m.old to m.to, under the prefix, keeping
// the query.
func (h *Handler) moved(m movedRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		to := m.to
		if strings.Contains(to, "{id}") {
			id := r.PathValue("id")
			query := r.URL.Query()
			switch {
			case m.old == "/instance":
				id = query.Get("id")
				query.Del("id")
				r.URL.RawQuery = query.Encode()
			case strings.HasPrefix(m.old, "/instance/"):
				id = r.PostFormValue("instance")
			}
			if strings.TrimSpace(id) == "" {
				// The instance page without an instance: the search page,
				// which opens one by its id.
				to = "/instances"
			} else {
				to = strings.Replace(to, "{id}", url.PathEscape(id), 1)
			}
		}
		status := http.StatusMovedPermanently
		if r.Method == http.MethodPost {
			status = http.StatusPermanentRedirect
		}
		target := h.opts.Prefix + to
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, status)
	}
}
