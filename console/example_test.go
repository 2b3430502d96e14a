package console_test

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivershared/riversharedtest"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// requireOperator is the application's own authentication (here HTTP basic
// auth; in an application, its session middleware). The console has none.
func requireOperator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte("ops:s3cret")) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="operators"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ExampleNew mounts the console under /bpmn of an application's mux, behind
// the application's authentication, beside River UI.
func ExampleNew() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	// A schema with River's and riverbpmn's migrations applied.
	schema := "riverbpmn_console_example"
	if _, err := dbPool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		panic(err)
	}
	defer dbPool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE") //nolint:errcheck
	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		panic(err)
	}

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{Schema: schema})
	if err != nil {
		panic(err)
	}
	bpmnConsole, err := console.New(engine, &console.Options{
		Prefix:     "/bpmn",
		RiverUIURL: "/riverui", // where the application mounts River UI
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/bpmn/", requireOperator(bpmnConsole))
	// mux.Handle("/riverui/", requireOperator(riverUIHandler))

	server := httptest.NewServer(mux)
	defer server.Close()
	resp, err := http.Get(server.URL + "/bpmn/incidents")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("without credentials:", resp.StatusCode)

	req, _ := http.NewRequest(http.MethodGet, server.URL+"/bpmn/incidents", nil)
	req.SetBasicAuth("ops", "s3cret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("as an operator:", resp.StatusCode, regexp.MustCompile(`<h1>(.*)</h1>`).FindStringSubmatch(string(body))[1])
	// Output:
	// without credentials: 401
	// as an operator: 200 Open incidents
}

// ExampleAuthorizer gives the console its own access rule: operators by
// basic auth or by a bearer token, a read-only viewer, nobody else.
func ExampleAuthorizer() {
	authorize := console.Authorizer(
		console.Credential{User: "ops", Secret: "op-s3cret", Access: console.AccessOperate},
		console.Credential{User: "viewer", Secret: "view-s3cret", Access: console.AccessRead},
		console.Credential{Secret: "ci-token-5d2f", Access: console.AccessOperate}, // Authorization: Bearer
	)
	opts := &console.Options{Prefix: "/bpmn", Authorize: authorize}

	for _, set := range []func(*http.Request){
		func(r *http.Request) {},
		func(r *http.Request) { r.SetBasicAuth("viewer", "view-s3cret") },
		func(r *http.Request) { r.SetBasicAuth("ops", "op-s3cret") },
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer ci-token-5d2f") },
	} {
		req := httptest.NewRequest(http.MethodGet, "/bpmn/incidents", nil)
		set(req)
		fmt.Println(opts.Authorize(req))
	}
	// Output:
	// none
	// read-only
	// operator
	// operator
}
