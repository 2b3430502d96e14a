package layering_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/layering"
)

// TestFeaturePackagesDoNotImportWorkflow: no package of the module but
// those above the front door (layering.AboveWorkflow) depends on workflow,
// directly or through another package (go list -deps, test files aside:
// external test packages may import workflow). The allow-list names only
// packages that exist, so that it cannot hide a renamed one.
func TestFeaturePackagesDoNotImportWorkflow(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, layering.Module+"/...").Output()
	require.NoError(t, err, "go list: %s", exitStderr(err))

	var (
		packages  []string
		offenders []string
	)
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		pkg, deps := fields[0], fields[1:]
		packages = append(packages, pkg)
		if pkg == layering.Workflow || layering.AboveWorkflow[pkg] != "" {
			continue
		}
		if slices.Contains(deps, layering.Workflow) {
			offenders = append(offenders, pkg)
		}
	}
	require.NoError(t, scanner.Err())
	require.Contains(t, packages, layering.Workflow)
	require.Contains(t, packages, layering.Module+"/incident", "the listing covers the feature packages")
	require.Empty(t, offenders, "feature packages must not import %s (move what they need into a Config field the engine fills)", layering.Workflow)

	for pkg := range layering.AboveWorkflow {
		require.Contains(t, packages, pkg, "layering.AboveWorkflow names a package that does not exist")
	}
}

// TestLayeringCatchesAnImport: the check above is not vacuous: a feature
// package (incident) depends on what workflow depends on, and workflow's
// own dependencies include a feature package, so an import the other way
// would show in the same listing.
func TestLayeringCatchesAnImport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{range .Deps}}{{.}} {{end}}`, layering.Workflow).Output()
	require.NoError(t, err, "go list: %s", exitStderr(err))
	require.Contains(t, strings.Fields(string(out)), layering.Module+"/incident", "go list -deps lists transitive imports")
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
