package docscheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureCLI is the CLI of the fixtures: one verb, job, with the flags the
// real one has.
func fixtureCLI(verb string) (map[string]bool, bool) {
	if verb != "job" {
		return nil, false
	}
	return map[string]bool{"schema": true, "json": true, "database-url": true}, true
}

func fixtureOptions(dir string) Options {
	return Options{
		Root:         filepath.Join("testdata", dir),
		Prose:        []string{"pkg/doc.go"},
		GoDocMirrors: map[string]string{"pkg/doc.go": "pkg/example_test.go"},
		CLI:          fixtureCLI,
		MakeTargets:  map[string]string{"fuzz": "the fixture's reason"},
		Verified:     map[string]string{"tool --verified": "the fixture's reason", "never shown": "stale"},
	}
}

func TestGoodFixturePasses(t *testing.T) {
	report, err := Check(fixtureOptions("good"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range report.Problems {
		t.Errorf("unexpected problem: %s", p)
	}
	if len(report.Unchecked) != 0 {
		t.Errorf("unchecked snippets: %v", report.Unchecked)
	}
	if want := []string{"pkg/example_test.go"}; strings.Join(report.Mirrored, ",") != strings.Join(want, ",") {
		t.Errorf("mirrored %v, want %v", report.Mirrored, want)
	}
	if strings.Join(report.UnusedVerified, ",") != "never shown" {
		t.Errorf("unused verified commands %v, want [never shown]", report.UnusedVerified)
	}
}

// TestBadFixtureFails checks that each kind of rot is caught, with the
// line it is on.
func TestBadFixtureFails(t *testing.T) {
	opts := fixtureOptions("bad")
	opts.MakeTargets = nil
	report, err := Check(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:3: "SEMANTICS.md": SEMANTICS.md is not in the repository`,
		`README.md:3: "DESIGN.md": DESIGN.md is not in the repository`,
		`README.md:3: "issue 15": an issue number`,
		`README.md:3: "seed 003": a seed number`,
		`README.md:3: "../shared": ../shared is outside`,
		`README.md:4: "REGARDS" is never said to be the CNES REGARDS jobs module`,
		`README.md:7: TestNotThere: no such function`,
		`README.md:9: Go snippet names no file it mirrors`,
		`README.md:13: Go snippet differs from pkg/example_test.go#ExampleHello from its line 2 ("fmt.Println(\"changed\")")`,
		`README.md:18: Go snippet mirrors pkg/example_test.go#ExampleGone: no function ExampleGone`,
		`README.md:22: Go snippet mirrors pkg/gone_test.go:`,
		`README.md:31: make nosuchtarget: no such target in the Makefile`,
		`README.md:32: make fuzz: CI (.ci/run) does not run it`,
		`README.md:33: command "rm -rf /" is not run by a test`,
		`README.md:34: riverbpmn nosuchverb: no such verb`,
		`README.md:35: riverbpmn job: no flag --nosuchflag`,
		`README.md:36: go test -run "TestAbsent" ./pkg: matches no test`,
		`README.md:37: go test ./nopkg:`,
		`README.md:41: command "curl http://example.com" is not run by a test`,
		`README.md:5: link "docs/nope.md": docs/nope.md does not exist`,
		`README.md:5: link "#no-such-heading": README.md has no heading with id "no-such-heading"`,
		`README.md:6: link "../../outside.md" leaves the repository`,
		`README.md:6: link "pkg/example_test.go#x": an anchor into pkg/example_test.go, which is not Markdown`,
		`README.md:44: pkg.Missing: package pkg has no exported Missing`,
		`README.md:44: pkg.Thing.Nope: Thing has no method or field Nope`,
		`pkg/doc.go:3: doc comment code differs from pkg/example_test.go from its line 1 ("greeting := \"hi\"")`,
	}
	got := make([]string, len(report.Problems))
	for i, p := range report.Problems {
		got[i] = p.String()
	}
	for _, w := range want {
		found := false
		for i, g := range got {
			if strings.HasPrefix(g, w) {
				found = true
				got[i] = ""
				break
			}
		}
		if !found {
			t.Errorf("missing problem %q", w)
		}
	}
	for _, g := range got {
		if g != "" {
			t.Errorf("unexpected problem %q", g)
		}
	}
	if len(report.Unchecked) != 1 || report.Unchecked[0].Line != 26 {
		t.Errorf("unchecked %v, want the nocheck block at line 26", report.Unchecked)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Usage: the basics":                  "usage-the-basics",
		"Second part: with `code`!":          "second-part-with-code",
		"Crashed clients (liveness)":         "crashed-clients-liveness",
		"Upgrading to 0.2: `exclusive.None`": "upgrading-to-02-exclusivenone",
		"[A link](x.md) in a heading":        "a-link-in-a-heading",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestMatchSnippet(t *testing.T) {
	source := []string{"func F() {", "\ta := 1", "\tb := 2", "\tc := 3", "}"}
	for _, tc := range []struct {
		snippet []string
		ok      bool
	}{
		{[]string{"a := 1", "b := 2"}, true},
		{[]string{"", "a := 1", "", ""}, true},
		{[]string{"a := 1", "// ...", "c := 3"}, true},
		{[]string{"a := 1", "// ...", "}"}, true},
		{[]string{"a := 1", "c := 3"}, false},
		{[]string{"b := 2", "a := 1"}, false},
		{[]string{"a := 1", "// ...", "d := 4"}, false},
	} {
		if _, ok := matchSnippet(tc.snippet, source); ok != tc.ok {
			t.Errorf("matchSnippet(%q) = %v, want %v", tc.snippet, ok, tc.ok)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got := splitCommand(`riverbpmn job 1 --schema "a;b" ; echo "exit $?" && make test | tee x # comment`)
	want := []string{`riverbpmn job 1 --schema "a;b"`, `echo "exit $?"`, `make test`, `tee x`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitCommand = %q, want %q", got, want)
	}
}

// TestRepositoryDocs checks the repository's README.md, docs/ and the
// workflow package doc, then compiles every package a snippet mirrors. It
// is what `make docs-check` runs.
func TestRepositoryDocs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := BuildCLI(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts, err := RepoOptions(root, cli)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts.Prose, "workflow/doc.go") {
		t.Fatalf("prose files %v miss workflow/doc.go", opts.Prose)
	}
	report, err := Check(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range report.Problems {
		t.Errorf("%s", p)
	}
	for _, p := range report.Unchecked {
		t.Errorf("%s: the repository's docs compile every snippet", p)
	}
	for _, cmd := range report.UnusedVerified {
		t.Errorf("Verified lists %q, which no doc shows any more: remove it", cmd)
	}
	if len(report.Mirrored) == 0 {
		t.Error("no Go snippet mirrors a file: the README's first program should")
	}
	if err := CompileMirrored(root, report.Mirrored); err != nil {
		t.Error(err)
	}
	// The install commands name this module and its CLI package.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.Fields(strings.SplitN(string(gomod), "\n", 2)[0])[1]
	for cmd := range Verified {
		for _, w := range strings.Fields(cmd) {
			if !strings.HasPrefix(w, "github.com/") {
				continue
			}
			path := strings.TrimSuffix(w, "@latest")
			rel, ok := strings.CutPrefix(path, module)
			if !ok {
				t.Errorf("Verified command %q names %s, not this module (%s)", cmd, path, module)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))); err != nil {
				t.Errorf("Verified command %q: %v", cmd, err)
			}
		}
	}
}
