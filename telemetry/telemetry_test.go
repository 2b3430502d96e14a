package telemetry

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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

// The tenant is an attribute of the jobs taken only when asked for.
func TestTenantAttributeOnlyWhenAskedFor(t *testing.T) {
	for _, withTenant := range []bool{false, true} {
		reader := sdkmetric.NewManualReader()
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		tel, err := New(Config{MeterProvider: provider, TenantAttribute: withTenant}, IdentifyFunc(func(*rivertype.JobRow) Identity {
			return Identity{HasContext: true, ProcessDefinitionKey: "invoice", TenantID: "acme"}
		}), nil)
		require.NoError(t, err)
		tel.Fetched(t.Context(), "default", OrderFair, []*rivertype.JobRow{{Kind: "k", Queue: "default"}})
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(t.Context(), &rm))
		var taken []metricdata.DataPoint[int64]
		for _, m := range rm.ScopeMetrics[0].Metrics {
			if m.Name == NameJobsTaken {
				taken = m.Data.(metricdata.Sum[int64]).DataPoints
			}
		}
		require.Len(t, taken, 1)
		tenant, ok := taken[0].Attributes.Value(AttrTenant)
		require.Equal(t, withTenant, ok)
		if withTenant {
			require.Equal(t, "acme", tenant.AsString())
		}
		process, _ := taken[0].Attributes.Value(AttrProcessDefinition)
		require.Equal(t, "invoice", process.AsString())
		require.NoError(t, provider.Shutdown(t.Context()))
	}
}
