package docscheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ProseFiles returns the Go files whose text is documentation a reader
// meets first (every package's doc.go, and the CLI's main.go, whose comment
// is its go doc), checked like the Markdown for references to outside the
// repository and for test names.
func ProseFiles(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	files := []string{"cmd/riverbpmn/main.go"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.ToSlash(rel))
	}
	sort.Strings(files)
	return files, nil
}

// MakeTargets are the make targets the docs show that CI does not run, and
// what verifies them.
var MakeTargets = map[string]string{
	"test-under-load": "scripts/test-under-load.sh: make test (which CI runs) while busy loops hold the load average up; run on demand, it reports each run's result and the load seen",
	"check":           "fmt-check, vet and test, which CI runs one by one",
	"help":            "prints the Makefile's ## comments; nothing to verify",
	"fuzz":            "go test -fuzz over retrypolicy's FuzzParseCycle, whose seed corpus make test runs",
}

// Verified are the other shell commands the docs show, exactly as written,
// and what verifies each.
var Verified = map[string]string{
	"go get github.com/riverbpmn/riverbpmn":                          "the module path is go.mod's; go get itself is Go's",
	"go install github.com/riverbpmn/riverbpmn/cmd/riverbpmn@latest": "cmd/riverbpmn is the CLI package, built by make test (cmd/riverbpmn's tests) and by this checker",
}

// RepoOptions returns the options that check the repository at root with
// the riverbpmn binary at cli.
func RepoOptions(root, cli string) (Options, error) {
	prose, err := ProseFiles(root)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Root:  root,
		Prose: prose,
		GoDocMirrors: map[string]string{
			"workflow/doc.go":      "examples/firstprogram/example_test.go",
			"riverbpmntest/doc.go": "riverbpmntest/example_docs_test.go",
		},
		CLI:         BinaryHelp(cli),
		MakeTargets: MakeTargets,
		Verified:    Verified,
	}, nil
}

var helpFlagRE = regexp.MustCompile(`(?m)^\s+-{1,2}([A-Za-z0-9][A-Za-z0-9-]*)\b`)

// BinaryHelp answers for the commands of the riverbpmn binary at path by
// running `riverbpmn NOUN VERB --help` (with no $DATABASE_URL in its
// environment): a command exists when that exits 0, and its flags are the
// ones the flag package lists.
func BinaryHelp(path string) CLIHelp {
	return func(verb string) (map[string]bool, bool) {
		cmd := exec.Command(path, append(strings.Fields(verb), "--help")...)
		var env []string
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "DATABASE_URL=") {
				env = append(env, e)
			}
		}
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return nil, false
		}
		flags := map[string]bool{"help": true, "h": true}
		for _, m := range helpFlagRE.FindAllStringSubmatch(out.String(), -1) {
			flags[m[1]] = true
		}
		return flags, true
	}
}

// BuildCLI builds cmd/riverbpmn of the module at root into dir and returns
// the binary's path.
func BuildCLI(root, dir string) (string, error) {
	bin := filepath.Join(dir, "riverbpmn")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/riverbpmn")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/riverbpmn: %v\n%s", err, out)
	}
	return bin, nil
}

// CompileMirrored runs go vet (which compiles test files too) on the
// packages of the mirrored files, so that every snippet's code builds.
func CompileMirrored(root string, mirrored []string) error {
	dirs := map[string]bool{}
	for _, f := range mirrored {
		dirs["./"+filepath.ToSlash(filepath.Dir(f))] = true
	}
	if len(dirs) == 0 {
		return nil
	}
	args := []string{"vet"}
	for d := range dirs {
		args = append(args, d)
	}
	sort.Strings(args[1:])
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// FindRoot returns the directory holding go.mod, from dir upwards.
func FindRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
