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

	var lines []string // what the verb printed
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
		m := regexp.MustCompile(`on (http://\S+?)/? \(`).FindStringSubmatch(line)
		require.NotNil(t, m, line)
		lines = append(lines, line)
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

	// Beyond loopback: refused without credentials, served with them (read
	// from the environment, never printed), or with --insecure-no-auth.
	t.Run("BeyondLoopback", func(t *testing.T) {
		code, _, errOut := runCLI(t, "console", "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--listen", "0.0.0.0:0")
		require.Equal(t, exitError, code)
		require.Contains(t, errOut, `--listen "0.0.0.0:0" serves beyond this machine and no credentials are set: set $RIVERBPMN_CONSOLE_PASSWORD`)
		require.Contains(t, errOut, "--insecure-no-auth")

		t.Setenv("RIVERBPMN_CONSOLE_PASSWORD", "pw-not-printed-7f3a")
		t.Setenv("RIVERBPMN_CONSOLE_TOKEN", "token-not-printed-9c1e")
		base, stop := serve(t, "--listen", "0.0.0.0:0")
		line := lines[len(lines)-1]
		require.Contains(t, line, `basic auth as "operator" (operator), bearer token (operator)`)
		require.NotContains(t, line, "not-printed")
		base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
		resp, err := http.Get(base + "/incidents")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		req, err := http.NewRequest(http.MethodGet, base+"/incidents", nil)
		require.NoError(t, err)
		req.SetBasicAuth("operator", "pw-not-printed-7f3a")
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), `method="post"`)
		require.NoError(t, stop())

		t.Setenv("RIVERBPMN_CONSOLE_PASSWORD", "")
		t.Setenv("RIVERBPMN_CONSOLE_TOKEN", "")
		base, stop = serve(t, "--listen", "0.0.0.0:0", "--insecure-no-auth")
		require.Contains(t, lines[len(lines)-1], "(NO AUTHENTICATION)")
		resp, err = http.Get(strings.Replace(base, "0.0.0.0", "127.0.0.1", 1) + "/incidents")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
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
