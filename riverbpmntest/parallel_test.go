package riverbpmntest_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParallelPackages: two packages' test binaries running at once keep
// their schemas apart when each makes its schema with its own
// riverdbtest.TestSchema call, as this package documents. Binary A makes a
// schema and holds it; binary B starts a second later, so its first
// TestSchema call drops the schemas of its prefix older than its own; then A
// checks that its schema is still there. The naive control shows the hazard
// the design avoids: when both packages make their schemas through one
// wrapper package, the schemas share the wrapper's prefix, and B drops A's
// schema while A uses it.
func TestParallelPackages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds two test binaries")
	}
	dir := t.TempDir()
	build := func(pkg string) string {
		bin := filepath.Join(dir, pkg+".test")
		out, err := exec.Command("go", "test", "-c", "-o", bin, "./testdata/"+pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return bin
	}
	binA, binB := build("pkga"), build("pkgb")

	run := func(t *testing.T, mode string) (schemaA, schemaB string, errA error, outA string) {
		hold := filepath.Join(t.TempDir(), "hold")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		a := exec.CommandContext(ctx, binA, "-test.count=1")
		a.Env = append(os.Environ(), "RIVERBPMNTEST_MODE="+mode, "RIVERBPMNTEST_HOLD="+hold)
		stdout, err := a.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		a.Stderr = &stderr
		require.NoError(t, a.Start())
		var out strings.Builder
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			out.WriteString(lines.Text() + "\n")
			if s, ok := strings.CutPrefix(lines.Text(), "SCHEMA "); ok {
				schemaA = s
				break
			}
		}
		require.NotEmpty(t, schemaA, "binary A printed no schema: %s%s", out.String(), stderr.String())

		// Schema names carry the second their binary made its first one:
		// B's must come later than A's for A's to count as expired to B.
		time.Sleep(1100 * time.Millisecond)
		b := exec.CommandContext(ctx, binB, "-test.count=1")
		b.Env = append(os.Environ(), "RIVERBPMNTEST_MODE="+mode)
		outB, err := b.CombinedOutput()
		require.NoError(t, err, "binary B: %s", outB)
		for line := range strings.Lines(string(outB)) {
			if s, ok := strings.CutPrefix(strings.TrimSpace(line), "SCHEMA "); ok {
				schemaB = s
			}
		}
		require.NotEmpty(t, schemaB, "binary B printed no schema: %s", outB)

		require.NoError(t, os.WriteFile(hold, nil, 0o600))
		for lines.Scan() {
			out.WriteString(lines.Text() + "\n")
		}
		errA = a.Wait()
		return schemaA, schemaB, errA, out.String() + stderr.String()
	}

	t.Run("EachPackageItsOwnCall", func(t *testing.T) {
		schemaA, schemaB, errA, outA := run(t, "")
		require.True(t, strings.HasPrefix(schemaA, "pkga_test_"), schemaA)
		require.True(t, strings.HasPrefix(schemaB, "pkgb_test_"), schemaB)
		require.NoError(t, errA, "binary A lost its schema: %s", outA)
	})

	t.Run("NaiveWrapperControl", func(t *testing.T) {
		schemaA, schemaB, errA, outA := run(t, "naive")
		require.True(t, strings.HasPrefix(schemaA, "naive_"), schemaA)
		require.True(t, strings.HasPrefix(schemaB, "naive_"), schemaB)
		require.Error(t, errA, "through a wrapper, B drops A's schema: %s", outA)
		require.Contains(t, outA, "was dropped while in use")
	})
}
