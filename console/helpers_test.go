package console_test

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// taskArgs is a job of process instance Instance; its worker fails while
// the test's fail flag is set.
type taskArgs struct {
	Instance string `json:"instance"`
}

func (taskArgs) Kind() string { return "console_task" }

func (a taskArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "order", ActivityID: "charge"}
}

type taskWorker struct {
	river.WorkerDefaults[taskArgs]
	fail *atomic.Bool
	done chan int64
}

func (w *taskWorker) Work(ctx context.Context, job *river.Job[taskArgs]) error {
	if w.fail.Load() {
		return errors.New("payment service answered 503 <b>unavailable</b>")
	}
	select {
	case w.done <- job.ID:
	default:
	}
	return nil
}

type env struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
	client *river.Client[pgx.Tx]
}

// newEnv migrates a fresh schema and returns an engine on it (exclusive by
// process instance, job definition charge-async for console_task) and an
// insert-only client.
func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	// Not reused: console actions create indexes and triggers in it.
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), &riverdbtest.TestSchemaOpts{DisableReuse: true})
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ExclusiveScope: exclusive.ProcessInstance,
		// The tests fetch through the engine's pilot directly, with no
		// running client and so no liveness session to fetch under.
		Liveness:           liveness.Config{Disabled: true},
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order", Priority: priority.Constant(5)}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "console_task"},
		},
	}})
	require.NoError(t, b.Engine.SyncJobDefinitions(ctx))
	return &env{t: t, ctx: ctx, pool: b.DBPool, schema: schema, engine: b.Engine, client: b.Client}
}

// insert inserts a job of instance and returns its id.
func (e *env) insert(instance string, opts *river.InsertOpts) int64 {
	e.t.Helper()
	res, err := e.client.Insert(e.ctx, taskArgs{Instance: instance}, opts)
	require.NoError(e.t, err)
	return res.Job.ID
}

// incident inserts a job of instance and discards it by setting its retries
// to 0, which opens a failedJob incident.
func (e *env) incident(instance string) int64 {
	e.t.Helper()
	id := e.insert(instance, nil)
	require.NoError(e.t, e.engine.SetJobRetries(e.ctx, id, 0))
	return id
}

// startWorker starts a working client whose worker fails while fail is set;
// it sends the id of every job it completes on the returned channel.
func (e *env) startWorker(fail *atomic.Bool) chan int64 {
	e.t.Helper()
	done := make(chan int64, 100)
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{fail: fail, done: done})
	client, err := workflow.NewClient(e.engine, &river.Config{
		Schema:            e.schema,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:           workers,
		FetchPollInterval: 50 * time.Millisecond,
		FetchCooldown:     10 * time.Millisecond,
	})
	require.NoError(e.t, err)
	require.NoError(e.t, client.Start(e.ctx))
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return done
}

// browser is an HTTP client with a cookie jar against a test server, as a
// browser without JavaScript would use the console.
type browser struct {
	t      *testing.T
	server *httptest.Server
	http   *http.Client
	prefix string
}

func (e *env) serve(opts *console.Options) *browser {
	e.t.Helper()
	h, err := console.New(e.engine, opts)
	require.NoError(e.t, err)
	e.t.Cleanup(h.Close)
	server := httptest.NewServer(h)
	e.t.Cleanup(server.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	b := &browser{t: e.t, server: server, http: &http.Client{Jar: jar}}
	if opts != nil {
		b.prefix = strings.TrimSuffix(opts.Prefix, "/")
	}
	return b
}

// get fetches path (under the prefix) and returns status and body.
func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.http.Get(b.server.URL + b.prefix + path)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return resp.StatusCode, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token returns the CSRF token of a page's forms.
func (b *browser) token(page string) string {
	b.t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	require.NotNil(b.t, m, "no CSRF token on the page")
	return m[1]
}

// post submits a form to path (under the prefix), following the redirect,
// and returns the final status and body.
func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	resp, err := b.http.PostForm(b.server.URL+b.prefix+path, form)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return resp.StatusCode, string(body)
}

// submit loads page, then posts form to action with the page's CSRF token
// and a return to the page.
func (b *browser) submit(page, action string, form url.Values) (int, string) {
	b.t.Helper()
	status, body := b.get(page)
	require.Equal(b.t, http.StatusOK, status, body)
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.token(body))
	form.Set("return", b.prefix+page)
	return b.post(action, form)
}

func countOf(body, s string) int { return strings.Count(body, s) }

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// confirmForm reads the confirmation page's form: its action and fields.
func confirmForm(t *testing.T, page string) (string, url.Values) {
	t.Helper()
	start := strings.Index(page, `<form method="post" action="`)
	require.GreaterOrEqual(t, start, 0, "no confirmation form on the page: %s", page)
	end := strings.Index(page[start:], "</form>")
	form := page[start : start+end]
	action := form[len(`<form method="post" action="`):]
	action = html.UnescapeString(action[:strings.Index(action, `"`)])
	values := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(form, -1) {
		values.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	require.Equal(t, "yes", values.Get("confirmed"))
	return action, values
}

// confirm submits a destructive form as submit does, checks that the
// answer is the confirmation page (nothing done yet) and returns it; then
// presses its confirm button (with force ticked when force) and returns
// the final status and body.
func (b *browser) confirm(page, action string, form url.Values, force bool) (confirmPage string, status int, body string) {
	b.t.Helper()
	status, confirmPage = b.submit(page, action, form)
	require.Equal(b.t, http.StatusOK, status, confirmPage)
	require.Contains(b.t, confirmPage, `id="confirm"`, "a destructive action asks first")
	target, values := confirmForm(b.t, confirmPage)
	if force {
		values.Set("force", "yes")
	}
	require.Equal(b.t, b.prefix+action, target)
	status, body = b.post(strings.TrimPrefix(target, b.prefix), values)
	return confirmPage, status, body
}

// serveHandler serves h as serve does.
func (e *env) serveHandler(h *console.Handler) *browser {
	e.t.Helper()
	server := httptest.NewServer(h)
	e.t.Cleanup(server.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &browser{t: e.t, server: server, http: &http.Client{Jar: jar}}
}

// authTransport sets credentials on every request.
type authTransport struct{ set func(*http.Request) }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	a.set(r)
	return http.DefaultTransport.RoundTrip(r)
}

// serveWith serves a console as serve does, with a browser that presents
// credentials (set) on every request.
func (e *env) serveWith(opts *console.Options, set func(*http.Request)) *browser {
	e.t.Helper()
	b := e.serve(opts)
	b.http.Transport = authTransport{set: set}
	return b
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
