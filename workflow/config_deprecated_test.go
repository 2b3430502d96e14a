package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
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
	old := &Config{TimerRetention: time.Minute, SuspensionServiceInterval: 2 * time.Second, ExpiryServiceInterval: 3 * time.Second, ProgressInterval: 4 * time.Second}
	require.Equal(t, timer.Config{Retention: time.Minute}, old.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: 2 * time.Second}, old.suspensionConfig())
	require.Equal(t, lifecycle.Config{ExpiryServiceInterval: 3 * time.Second}, old.lifecycleConfig())
	require.Equal(t, jobcontrol.Config{ProgressInterval: 4 * time.Second}, old.jobControlConfig())
	_, err := NewEngine(nil, old)
	require.NoError(t, err)

	nested := &Config{
		Timers:     timer.Config{Retention: time.Hour},
		Suspension: suspension.Config{ServiceInterval: time.Second},
		Lifecycle:  lifecycle.Config{ExpiryServiceInterval: 500 * time.Millisecond},
		JobControl: jobcontrol.Config{ProgressInterval: 2 * time.Second},
	}
	require.Equal(t, timer.Config{Retention: time.Hour}, nested.timersConfig())
	require.Equal(t, suspension.Config{ServiceInterval: time.Second}, nested.suspensionConfig())
	require.Equal(t, lifecycle.Config{ExpiryServiceInterval: 500 * time.Millisecond}, nested.lifecycleConfig())
	require.Equal(t, jobcontrol.Config{ProgressInterval: 2 * time.Second}, nested.jobControlConfig())

	same := *nested
	same.TimerRetention, same.SuspensionServiceInterval, same.ExpiryServiceInterval = time.Hour, time.Second, 500*time.Millisecond
	same.ProgressInterval = 2 * time.Second
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
		{&Config{JobControl: jobcontrol.Config{ProgressInterval: time.Second}, ProgressInterval: time.Minute},
			"Config.JobControl.ProgressInterval (1s) and the deprecated Config.ProgressInterval (1m0s) differ"},
		{&Config{JobControl: jobcontrol.Config{ProgressInterval: -time.Second}}, "Config.JobControl: ProgressInterval must not be negative, got -1s"},
	} {
		_, err := NewEngine(nil, tc.config)
		require.ErrorContains(t, err, tc.want)
	}
}
