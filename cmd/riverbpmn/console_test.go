package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// lineWriter passes each write to a channel: the verb's first line says
// where it listens.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestConsoleVerb(t *testing.T) {
	engine, schema := opsSetup(t)
	ctx := context.Background()
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "pi-1"}, nil)
	require.NoError(t, err)
	require.NoError(t, engine.SetJobRetries(ctx, res.Job.ID, 0))

	serve := func(t *testing.T, extra ...string) (string, func() error) {
		t.Helper()
		ctx, cancel := context.WithCancel(ctx)
		out := make(lineWriter, 4)
		errc := make(chan error, 1)
		args := append([]string{"--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--listen", "127.0.0.1:0"}, extra...)
		go func() { errc <- runConsole(ctx, args, out) }()
		var line string
		select {
		case line = <-out:
		case err := <-errc:
			cancel()
			t.Fatalf("console verb ended: %v", err)
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatal("console verb did not start")
		}
		m := regexp.MustCompile(`on (http://\S+?)/?\n`).FindStringSubmatch(line)
		require.NotNil(t, m, line)
		return m[1], func() error { cancel(); return <-errc }
	}

	t.Run("ReadWrite", func(t *testing.T) {
		base, stop := serve(t, "--prefix", "/bpmn", "--riverui-url", "/riverui")
		resp, err := http.Get(base + "/incidents")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), "<h1>Open incidents</h1>")
		require.Contains(t, string(body), `action="/bpmn/jobs/`)
		require.Contains(t, string(body), `href="/riverui"`)
		require.NoError(t, stop())
	})

	t.Run("ReadOnly", func(t *testing.T) {
		base, stop := serve(t, "--read-only")
		resp, err := http.Get(base + "/incidents")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NotContains(t, string(body), `method="post"`)
		resp, err = http.PostForm(base+"/locks/delete-stale", url.Values{})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.NoError(t, stop())
	})

	t.Run("BadFlags", func(t *testing.T) {
		code, _, errOut := runCLI(t, "console", "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--listen", "127.0.0.1:0", "--prefix", "bpmn")
		require.Equal(t, exitError, code)
		require.Contains(t, errOut, `Prefix "bpmn" must start with a slash`)
		code, _, errOut = runCLI(t, "console", "--database-url", riversharedtest.TestDatabaseURL(), "--listen", "not-an-address")
		require.Equal(t, exitError, code)
		require.True(t, strings.Contains(errOut, `--listen "not-an-address"`), errOut)
	})
}
