package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/timer"
)

// TestConfigDeprecatedFieldsHonoured: a deprecated flat field of Config is
// honoured when the nested feature setting is zero, the nested one wins
// when set, the same value in both is no conflict, and different values are
// refused by NewEngine with an error naming both fields.
func TestConfigDeprecatedFieldsHonoured(t *testing.T) {
	t.Parallel()
	old := &Config{TimerRetention: time.Minute, SuspensionServiceInterval: 2 * time.Second, ExpiryServiceInterval: 3 * time.Second}
	require.Equal(t, timer.Config{Retention: time.Minute}, old.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: 2 * time.Second}, old.suspensionConfig())
	require.Equal(t, lifecycle.Config{ExpiryServiceInterval: 3 * time.Second}, old.lifecycleConfig())
	_, err := NewEngine(nil, old)
	require.NoError(t, err)

	nested := &Config{
		Timers:     timer.Config{Retention: time.Hour},
		Suspension: suspension.Config{ServiceInterval: time.Second},
		Lifecycle:  lifecycle.Config{ExpiryServiceInterval: 500 * time.Millisecond},
	}
	require.Equal(t, timer.Config{Retention: time.Hour}, nested.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: time.Second}, nested.suspensionConfig())
	require.Equal(t, lifecycle.Config{ExpiryServiceInterval: 500 * time.Millisecond}, nested.lifecycleConfig())

	same := *nested
	same.TimerRetention, same.SuspensionServiceInterval, same.ExpiryServiceInterval = time.Hour, time.Second, 500*time.Millisecond
	_, err = NewEngine(nil, &same)
	require.NoError(t, err, "the same value twice is no conflict")

	for _, tc := range []struct {
		config *Config
		want   string
	}{
		{&Config{Timers: timer.Config{Retention: time.Hour}, TimerRetention: time.Minute},
			"Config.Timers.Retention (1h0m0s) and the deprecated Config.TimerRetention (1m0s) differ"},
		{&Config{Suspension: suspension.Config{ServiceInterval: time.Second}, SuspensionServiceInterval: time.Minute},
			"Config.Suspension.ServiceInterval (1s) and the deprecated Config.SuspensionServiceInterval (1m0s) differ"},
		{&Config{Lifecycle: lifecycle.Config{ExpiryServiceInterval: time.Second}, ExpiryServiceInterval: time.Minute},
			"Config.Lifecycle.ExpiryServiceInterval (1s) and the deprecated Config.ExpiryServiceInterval (1m0s) differ"},
	} {
		_, err := NewEngine(nil, tc.config)
		require.ErrorContains(t, err, tc.want)
	}
}
