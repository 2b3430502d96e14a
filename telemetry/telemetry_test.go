package telemetry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigValidateNamesTheField(t *testing.T) {
	require.NoError(t, Config{}.Validate())
	require.NoError(t, Config{FiguresInterval: -1}.Validate(), "negative: no figures")
	require.NoError(t, Config{FiguresInterval: time.Minute}.Validate())
	err := Config{FiguresInterval: 100 * time.Millisecond}.Validate()
	require.ErrorContains(t, err, "Config.FiguresInterval 100ms")
}

func TestOrder(t *testing.T) {
	require.Equal(t, "river", Order())
	require.Equal(t, "timers_first+priority", Order(OrderTimersFirst, OrderPriority))
}

// A nil *Instruments records nothing and never fails.
func TestNilInstruments(t *testing.T) {
	var tel *Instruments
	tel.Fetched(t.Context(), "q", OrderRiver, nil)
	tel.Fences(t.Context())
	tel.Takeover(t.Context(), 3)
	tel.Expired(t.Context(), 1, "work")
	tel.IncidentsChanged(t.Context(), 1, 1)
	tel.SessionsFrom(func() int64 { return 1 })
	require.Nil(t, tel.Leader("s"))
	require.NoError(t, tel.Close())
	require.Zero(t, tel.FigureReads())
}
