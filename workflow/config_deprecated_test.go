package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/timer"
)

// TestConfigDeprecatedFieldsHonoured: a deprecated flat field of Config is
// honoured when the nested feature setting is zero, and the nested one wins
// when set (NewEngine refuses the two set to different values: the
// TestTimers and TestSuspensions Config subtests and TestPruneTimers).
func TestConfigDeprecatedFieldsHonoured(t *testing.T) {
	t.Parallel()
	old := &Config{TimerRetention: time.Minute, SuspensionServiceInterval: 2 * time.Second}
	require.Equal(t, timer.Config{Retention: time.Minute}, old.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: 2 * time.Second}, old.suspensionConfig())

	nested := &Config{Timers: timer.Config{Retention: time.Hour}, Suspension: suspension.Config{ServiceInterval: time.Second}}
	require.Equal(t, timer.Config{Retention: time.Hour}, nested.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: time.Second}, nested.suspensionConfig())
}
