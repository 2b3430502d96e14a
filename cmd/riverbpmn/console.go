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
	"time"

	"github.com/riverbpmn/riverbpmn/console"
)

func runConsole(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v        = newDBVerb("console")
		listen   string
		readOnly bool
		riverUI  string
		prefix   string
	)
	v.fs.StringVar(&listen, "listen", "127.0.0.1:8090", "address to serve on (host:port)")
	v.fs.BoolVar(&readOnly, "read-only", false, "show everything, change nothing: no forms, POST refused")
	v.fs.StringVar(&riverUI, "riverui-url", "", "base URL of a River UI on the same database, for links to its job pages")
	v.fs.StringVar(&prefix, "prefix", "", "path to serve the console under (for example /bpmn); default the root")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	handler, err := console.New(engine, &console.Options{ReadOnly: readOnly, RiverUIURL: riverUI, Prefix: prefix})
	if err != nil {
		return err
	}
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
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	mode := ""
	if readOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(stdout, "riverbpmn console%s on http://%s%s/\n", mode, ln.Addr(), prefix)
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
