// Package console is a web console for operators of riverbpmn: open
// incidents with a retry button and a bulk retry; lists and search of jobs
// and of process instances (by state, kind, job definition, process
// definition, tenant, instance id prefix, creation time; newest or oldest
// first) with bulk suspend, activate, stop and priority on a selection or
// on every job a filter matches, run in the background with a progress
// page; on each job's page, why it is not running (package diagnose) and
// what to do; a process instance's jobs, timers and
// exclusive waits, job definitions with their priority overrides, exclusive
// locks, one job's context, status, progress, prerequisites, attempts and
// errors, suspended targets and scheduled suspensions, and the clients'
// liveness sessions, job status events newest first, and schema maintenance
// (timer prune, tenant fairness and fetch-order indexes); with buttons to
// stop, suspend, activate and queue jobs, instances and definitions, to
// switch events on and off and prune them, and to create and drop the
// on-demand indexes. It is an http.Handler
// an application mounts beside River UI, built from a workflow.Engine; the
// `riverbpmn console` command serves it on its own.
//
// Pages are rendered on the server (html/template, embedded files) and work
// without JavaScript. Every list is paged in SQL with a keyset cursor, so a
// process instance with 10,000 jobs costs one index range scan per page.
//
// Security: every change is a POST carrying a CSRF token (see New); in
// read-only mode no form is rendered and every POST is refused. Everything
// read from the database is escaped by html/template. Options.Authorize
// decides per request who may read and who may operate (Authorizer: basic
// auth or bearer tokens); without it, wrap the handler in the
// application's authentication.
package console

import (
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/riverbpmn/riverbpmn/workflow"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*
var staticFS embed.FS

// DefaultPageSize is how many rows a list shows per page unless
// Options.PageSize says otherwise.
const DefaultPageSize = 50

// Options configure the console. The zero value is a read-write console
// mounted at the root, without River UI links, with a random CSRF secret.
type Options struct {
	// ReadOnly hides every form and refuses every POST (403).
	ReadOnly bool
	// RiverUIURL is the base URL of a River UI on the same database (for
	// example "/riverui" or "https://ops.example.com/riverui"); when set, a
	// job's page links to River UI's page for the same job.
	RiverUIURL string
	// Prefix is the path the handler is mounted under (for example
	// "/bpmn"), without a trailing slash; "" for the root. The handler
	// expects requests with the prefix still on the path (mount it with
	// mux.Handle(prefix+"/", handler)) and puts it on every link it renders.
	Prefix string
	// CSRFSecret keys the HMAC of the CSRF tokens (at least 32 bytes). nil
	// draws a random one: fine for one process, but every replica behind a
	// load balancer needs the same secret.
	CSRFSecret []byte
	// PageSize is the number of rows a list shows per page (1 to
	// workflow.MaxPageSize); 0 means DefaultPageSize.
	PageSize int
	// Authorize decides, per request, what it may do: AccessOperate,
	// AccessRead (pages without forms, POST refused) or AccessNone (401
	// with a basic-auth challenge). Authorizer builds one from credentials;
	// an application passes its own session check. nil grants every
	// request AccessOperate (AccessRead with ReadOnly): mount the console
	// behind the application's authentication then.
	Authorize func(r *http.Request) Access
}

// Handler serves the console. Build it with New.
type Handler struct {
	engine   *workflow.Engine
	opts     Options
	secret   []byte
	pages    map[string]*template.Template
	mux      *http.ServeMux
	pageSize int
	bulk     *bulkRunner
}

// New returns the console for engine. It checks the options and names the
// bad one.
func New(engine *workflow.Engine, opts *Options) (*Handler, error) {
	if engine == nil {
		return nil, errors.New("console: engine is nil")
	}
	h := &Handler{engine: engine, bulk: newBulkRunner()}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.Prefix = strings.TrimSuffix(h.opts.Prefix, "/")
	if h.opts.Prefix != "" && !strings.HasPrefix(h.opts.Prefix, "/") {
		return nil, fmt.Errorf("console: Prefix %q must start with a slash (for example \"/bpmn\")", h.opts.Prefix)
	}
	h.opts.RiverUIURL = strings.TrimSuffix(h.opts.RiverUIURL, "/")
	h.pageSize = h.opts.PageSize
	if h.pageSize == 0 {
		h.pageSize = DefaultPageSize
	}
	if h.pageSize < 1 || h.pageSize > workflow.MaxPageSize {
		return nil, fmt.Errorf("console: PageSize %d is out of range: 1 to %d", h.opts.PageSize, workflow.MaxPageSize)
	}
	switch {
	case h.opts.CSRFSecret == nil:
		h.secret = make([]byte, 32)
		if _, err := rand.Read(h.secret); err != nil {
			return nil, fmt.Errorf("console: drawing a CSRF secret: %w", err)
		}
	case len(h.opts.CSRFSecret) < 32:
		return nil, fmt.Errorf("console: CSRFSecret has %d bytes; it needs at least 32", len(h.opts.CSRFSecret))
	default:
		h.secret = append([]byte(nil), h.opts.CSRFSecret...)
	}
	if err := h.parseTemplates(); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

func (h *Handler) parseTemplates() error {
	h.pages = make(map[string]*template.Template)
	for _, page := range []string{"incidents", "jobs", "instances", "bulk", "instance", "definitions", "locks", "job", "suspended", "clients", "events", "maintenance", "deployments", "deployment_delete", "error", "confirm", "bulklist", "overview", "queues", "timers"} {
		t, err := template.New(page).Funcs(h.funcs()).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return fmt.Errorf("console: parsing template %s: %w", page, err)
		}
		h.pages[page] = t
	}
	return nil
}

func (h *Handler) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", h.overviewPage)
	mux.HandleFunc("GET /incidents", h.incidents)
	mux.HandleFunc("GET /jobs", h.jobsPage)
	mux.HandleFunc("GET /instances", h.instancesPage)
	mux.HandleFunc("GET /instances/{id}", h.instance)
	mux.HandleFunc("GET /bulk/{id}", h.bulkPage)
	mux.HandleFunc("GET /definitions", h.definitions)
	mux.HandleFunc("GET /exclusive/locks", h.locks)
	mux.HandleFunc("GET /jobs/{id}", h.job)
	mux.HandleFunc("GET /suspensions", h.suspended)
	mux.HandleFunc("GET /sessions", h.clients)
	mux.HandleFunc("GET /events", h.eventsPage)
	mux.HandleFunc("GET /indexes", h.maintenance)
	mux.HandleFunc("GET /deployments", h.deployments)
	mux.HandleFunc("GET /deployments/{id}/delete", h.deploymentDelete)

	mux.HandleFunc("GET /bulk", h.bulkList)
	mux.HandleFunc("GET /queues", h.queuesPage)
	mux.HandleFunc("GET /timers", h.timersPage)

	// Changes. The destructive ones (h.confirm) render a confirmation page
	// saying what they will touch before they run.
	mux.HandleFunc("POST /deployments/{id}/delete", h.action(h.deleteDeployment))
	mux.HandleFunc("POST /jobs/{id}/retries", h.action(h.setRetries))
	mux.HandleFunc("POST /jobs/{id}/priority", h.action(h.setJobPriority))
	mux.HandleFunc("POST /definitions/priority", h.action(h.setOverride))
	mux.HandleFunc("POST /definitions/priority/clear", h.action(h.clearOverride))
	mux.HandleFunc("POST /exclusive/locks/delete-stale", h.action(h.deleteStaleLocks))
	mux.HandleFunc("POST /exclusive/scope", h.confirm(h.describeSetScope, h.action(h.setExclusiveScope)))
	mux.HandleFunc("POST /timers/{id}/due-date", h.action(h.setTimerDueDate))
	mux.HandleFunc("POST /timers/{id}/cancel", h.confirm(h.describeCancelTimer, h.action(h.cancelTimer)))
	mux.HandleFunc("POST /jobs/{id}/stop", h.confirm(h.describeStopJob, h.action(h.stopJob)))
	mux.HandleFunc("POST /jobs/{id}/suspend", h.action(h.suspendJob))
	mux.HandleFunc("POST /jobs/{id}/activate", h.action(h.activateJob))
	mux.HandleFunc("POST /jobs/{id}/queue", h.action(h.queueJob))
	mux.HandleFunc("POST /jobs/{id}/execute", h.action(h.executeJob))
	mux.HandleFunc("POST /suspensions/{id}/apply", h.action(h.applyScheduledSuspension))
	mux.HandleFunc("POST /instances/{id}/stop", h.confirm(h.describeStopInstance, h.action(h.stopInstance)))
	mux.HandleFunc("POST /instances/{id}/suspend", h.action(h.suspendInstance))
	mux.HandleFunc("POST /instances/{id}/activate", h.action(h.activateInstance))
	mux.HandleFunc("POST /instances/{id}/queue", h.action(h.queueInstance))
	mux.HandleFunc("POST /definitions/suspend", h.action(h.suspendDefinition))
	mux.HandleFunc("POST /definitions/activate", h.action(h.activateDefinition))
	mux.HandleFunc("POST /events/enable", h.action(h.enableEvents))
	mux.HandleFunc("POST /events/disable", h.confirm(h.describeDisableEvents, h.action(h.disableEvents)))
	mux.HandleFunc("POST /events/prune", h.confirm(h.describePruneEvents, h.action(h.pruneEvents)))
	mux.HandleFunc("POST /timers/prune", h.confirm(h.describePruneTimers, h.action(h.pruneTimers)))
	mux.HandleFunc("POST /indexes/fairness/enable", h.action(h.enableFairness))
	mux.HandleFunc("POST /indexes/fairness/disable", h.confirm(describeDropIndexes(h.tenantIndexes()), h.action(h.disableFairness)))
	mux.HandleFunc("POST /indexes/fetch-order/enable", h.action(h.enableFetchIndex))
	mux.HandleFunc("POST /indexes/fetch-order/disable", h.confirm(describeDropIndexes(h.fetchIndexes()), h.action(h.disableFetchIndex)))
	mux.HandleFunc("POST /exclusive/indexes/enable", h.action(h.enableHeadIndex))
	mux.HandleFunc("POST /exclusive/indexes/disable", h.confirm(describeDropIndexes(h.headIndexes()), h.action(h.disableHeadIndex)))
	mux.HandleFunc("POST /queues/pause", h.confirm(h.describePauseQueue, h.action(h.pauseQueue)))
	mux.HandleFunc("POST /queues/resume", h.action(h.resumeQueue))
	mux.HandleFunc("POST /bulk/jobs", h.confirm(h.describeBulkJobs, h.bulkForm(h.bulkJobsSpec)))
	mux.HandleFunc("POST /bulk/retry", h.confirm(h.describeBulkRetry, h.bulkForm(bulkRetrySpec)))

	// The previous release's paths redirect to the ones that name the CLI's
	// nouns (moved.go).
	for _, m := range movedRoutes {
		mux.HandleFunc(m.method+" "+m.old, h.moved(m))
	}
	h.mux = mux
}

// ServeHTTP serves a console request. The path must start with
// Options.Prefix; other paths are not found.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("Referrer-Policy", "same-origin")
	access := h.access(r)
	if access == AccessNone {
		w.Header().Set("WWW-Authenticate", `Basic realm="riverbpmn console", charset="UTF-8"`)
		http.Error(w, "console: authentication required", http.StatusUnauthorized)
		return
	}
	r = withAccess(r, access)
	problem := inputProblem("query parameter", r.URL.Query())
	if problem == "" {
		problem = inputProblem("path", map[string][]string{"segment": {r.URL.Path}})
	}
	if problem != "" {
		h.renderError(w, r, http.StatusBadRequest, errors.New(problem))
		return
	}
	if r.Method == http.MethodPost && access < AccessOperate {
		http.Error(w, "the console is read-only for you: changes are refused", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.takeOver()
	path := r.URL.Path
	if h.opts.Prefix != "" {
		rest, ok := strings.CutPrefix(path, h.opts.Prefix)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, h.opts.Prefix+"/", http.StatusSeeOther)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = rest
		u.RawPath = strings.TrimPrefix(u.RawPath, h.opts.Prefix)
		if u.RawPath == r.URL.RawPath {
			u.RawPath = "" // not under the prefix as written: let Go escape Path
		}
		r2.URL = &u
		r = r2
	}
	h.mux.ServeHTTP(w, r)
}
