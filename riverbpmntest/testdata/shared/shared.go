// Package shared is the test body of packages pkga and pkgb, which
// riverbpmntest's TestParallelPackages runs as two test binaries at once.
package shared

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

// HoldSchema builds a bundle on schema, prints "SCHEMA name", and, when
// RIVERBPMNTEST_HOLD names a file, waits for that file and checks that the
// schema is still there and its engine still answers.
func HoldSchema(t *testing.T, schema string) {
	ctx := context.Background()
	bundle := riverbpmntest.New(ctx, t, schema, nil)
	fmt.Printf("SCHEMA %s\n", schema)
	hold := os.Getenv("RIVERBPMNTEST_HOLD")
	if hold == "" {
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(hold); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "no hold file %s within 2 minutes", hold)
		time.Sleep(20 * time.Millisecond)
	}
	var exists bool
	require.NoError(t, bundle.DBPool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists))
	require.True(t, exists, "schema %s was dropped while in use", schema)
	_, err := bundle.Engine.JobDefinitions(ctx)
	require.NoError(t, err)
}
