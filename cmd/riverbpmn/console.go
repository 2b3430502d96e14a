package main

// The console verb: serves the operator web console (package console) on
// its own, over the same connection flags as the other verbs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/console"
)

// The console verb's credentials come from the environment, never from a
// flag (a flag shows in ps and shell history) and are never printed.
const (
	envConsoleUser           = "RIVERBPMN_CONSOLE_USER"
	envConsolePassword       = "RIVERBPMN_CONSOLE_PASSWORD"
	envConsoleViewerUser     = "RIVERBPMN_CONSOLE_VIEWER_USER"
	envConsoleViewerPassword = "RIVERBPMN_CONSOLE_VIEWER_PASSWORD"
	envConsoleToken          = "RIVERBPMN_CONSOLE_TOKEN"
)

// consoleCredentials reads the console's credentials from the environment,
// and says which are set (without their secrets).
func consoleCredentials(getenv func(string) string) ([]console.Credential, []string) {
	var (
		creds []console.Credential
		names []string
	)
	user := func(env, def string) string {
		if u := getenv(env); u != "" {
			return u
		}
		return def
	}
	if p := getenv(envConsolePassword); p != "" {
		u := user(envConsoleUser, "operator")
		creds = append(creds, console.Credential{User: u, Secret: p, Access: console.AccessOperate})
		names = append(names, fmt.Sprintf("basic auth as %q (operator)", u))
	}
	if p := getenv(envConsoleViewerPassword); p != "" {
		u := user(envConsoleViewerUser, "viewer")
		creds = append(creds, console.Credential{User: u, Secret: p, Access: console.AccessRead})
		names = append(names, fmt.Sprintf("basic auth as %q (read-only)", u))
	}
	if t := getenv(envConsoleToken); t != "" {
		creds = append(creds, console.Credential{Secret: t, Access: console.AccessOperate})
		names = append(names, "bearer token (operator)")
	}
	return creds, names
}

func runConsole(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v        = newDBVerb("console")
		listen   string
		readOnly bool
		riverUI  string
		prefix   string
		noAuth   bool
	)
	v.fs.StringVar(&listen, "listen", "127.0.0.1:8090", "address to serve on (host:port); beyond loopback only with credentials ($"+envConsolePassword+", $"+envConsoleToken+") or --insecure-no-auth")
	v.fs.BoolVar(&readOnly, "read-only", false, "show everything, change nothing: no forms, POST refused")
	v.fs.StringVar(&riverUI, "riverui-url", "", "base URL of a River UI on the same database, for links to its job pages")
	v.fs.StringVar(&prefix, "prefix", "", "path to serve the console under (for example /bpmn); default the root")
	v.fs.BoolVar(&noAuth, "insecure-no-auth", false, "serve beyond loopback without credentials: anyone who reaches the address can stop jobs (behind an authenticating proxy only)")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	creds, credNames := consoleCredentials(os.Getenv)
	opts := &console.Options{ReadOnly: readOnly, RiverUIURL: riverUI, Prefix: prefix}
	if len(creds) > 0 {
		opts.Authorize = console.Authorizer(creds...)
	}
	handler, err := console.New(engine, opts)
	if err != nil {
		return err
	}
	defer handler.Close()
	mux := http.NewServeMux()
	if prefix == "" {
		mux.Handle("/", handler)
	} else {
		mux.Handle(prefix+"/", handler)
		mux.Handle(prefix, handler)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", listen, err)
	}
	if addr, ok := ln.Addr().(*net.TCPAddr); ok && !addr.IP.IsLoopback() && len(creds) == 0 {
		if !noAuth {
			ln.Close()
			return fmt.Errorf("--listen %q serves beyond this machine and no credentials are set: set $%s (basic auth, user $%s, default operator), $%s (read-only, user $%s, default viewer) or $%s (bearer token); or pass --insecure-no-auth behind an authenticating proxy",
				listen, envConsolePassword, envConsoleUser, envConsoleViewerPassword, envConsoleViewerUser, envConsoleToken)
		}
		fmt.Fprintf(os.Stderr, "WARNING: riverbpmn console serves %s beyond loopback WITHOUT AUTHENTICATION (--insecure-no-auth): anyone who reaches it can stop, suspend and retry jobs%s\n",
			ln.Addr(), map[bool]string{true: " (read-only: they can read every job)", false: ""}[readOnly])
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	mode := ""
	if readOnly {
		mode = " (read-only)"
	}
	auth := "no authentication (loopback only)"
	switch {
	case len(credNames) > 0:
		auth = strings.Join(credNames, ", ")
	case noAuth:
		auth = "NO AUTHENTICATION"
	}
	fmt.Fprintf(stdout, "riverbpmn console%s on http://%s%s/ (%s)\n", mode, ln.Addr(), prefix, auth)
	errc := make(chan error, 1)
	go func() { errc <- server.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := server.Shutdown(shutdownCtx); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
