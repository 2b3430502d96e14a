package workflow

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// migrateChildEnv, set, makes TestMigrateUpChild migrate: its value is
// "schema start", start the Unix nanosecond time to begin at, so that every
// child begins together.
const migrateChildEnv = "RIVERBPMN_MIGRATE_CHILD"

// TestMigrateUpChild is one process of TestMigrateUpConcurrentProcesses. It
// opens a pool of its own, waits for the common start, migrates, and prints
// how many versions of each line it applied.
func TestMigrateUpChild(t *testing.T) {
	spec := os.Getenv(migrateChildEnv)
	if spec == "" {
		t.Skip("run by TestMigrateUpConcurrentProcesses")
	}
	schema, startText, _ := strings.Cut(spec, " ")
	start, err := strconv.ParseInt(startText, 10, 64)
	require.NoError(t, err)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("TEST_DATABASE_URL"))
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pool.Ping(ctx))
	time.Sleep(time.Until(time.Unix(0, start)))
	res, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err)
	fmt.Printf("MIGRATED main=%d bpmn=%d\n", len(res.Main.Versions), len(res.BPMN.Versions))
}

// TestMigrateUpConcurrentProcesses: 8 processes migrate one fresh schema at
// once, as replicas that migrate when they boot do. Every one succeeds, the
// migrations are applied once in all (one process applies each line, the
// others find nothing to do), and the schema ends fully migrated. Without the
// migration lock, some fail: two creating River's types at once collide on
// pg_type's unique index, or one finds river_migration already created.
func TestMigrateUpConcurrentProcesses(t *testing.T) {
	t.Parallel()
	const processes = 8
	ctx := context.Background()
	schema := emptySchema(t)
	// Far enough ahead for every child to have started and connected.
	start := time.Now().Add(3 * time.Second).UnixNano()

	var (
		wg      sync.WaitGroup
		outputs = make([]string, processes)
		errs    = make([]error, processes)
	)
	for i := range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := exec.Command(os.Args[0], "-test.run=^TestMigrateUpChild$", "-test.count=1", "-test.v")
			child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", migrateChildEnv, schema, start))
			out, err := child.CombinedOutput()
			outputs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()

	counted := regexp.MustCompile(`MIGRATED main=(\d+) bpmn=(\d+)`)
	var mainApplied, bpmnApplied, appliers int
	for i := range processes {
		require.NoError(t, errs[i], "process %d failed:\n%s", i, outputs[i])
		m := counted.FindStringSubmatch(outputs[i])
		require.NotNil(t, m, "process %d:\n%s", i, outputs[i])
		mainN, _ := strconv.Atoi(m[1])
		bpmnN, _ := strconv.Atoi(m[2])
		mainApplied += mainN
		bpmnApplied += bpmnN
		if mainN > 0 {
			appliers++
		}
	}
	mainVersions, bpmnVersions, err := MigrationVersions(ctx, testPool(t), schema)
	require.NoError(t, err)
	require.Equal(t, ourMigrationVersions(t), bpmnVersions)
	require.Equal(t, len(mainVersions), mainApplied, "each of River's migrations applied once in all")
	require.Equal(t, len(bpmnVersions), bpmnApplied, "each of ours applied once in all")
	require.Equal(t, 1, appliers, "one process applied River's line, the others found it done")
}
