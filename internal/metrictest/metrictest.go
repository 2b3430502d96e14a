// Package metrictest reads riverbpmn's measurements back in tests: a meter
// provider with the OpenTelemetry SDK's in-memory reader, and the totals of
// its sums, gauges and histograms.
package metrictest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/riverbpmn/riverbpmn/telemetry"
)

// Reader is a meter provider whose measurements a test reads back.
type Reader struct {
	// Provider is the meter provider to measure with
	// (telemetry.Config.MeterProvider).
	Provider *sdkmetric.MeterProvider

	reader *sdkmetric.ManualReader
}

// NewReader returns a Reader whose provider is shut down when the test
// ends.
func NewReader(tb testing.TB) *Reader {
	tb.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tb.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return &Reader{Provider: provider, reader: reader}
}

// Collect returns riverbpmn's metrics (telemetry.ScopeName) by name.
func (r *Reader) Collect(tb testing.TB) map[string]metricdata.Metrics {
	tb.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(tb, r.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// Sum returns the total of an Int64 sum or gauge, over the data points
// whose attributes include every one of match.
func Sum(m metricdata.Metrics, match ...attribute.KeyValue) int64 {
	var total int64
	points := func(attrs attribute.Set) bool {
		for _, kv := range match {
			if v, ok := attrs.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	switch data := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range data.DataPoints {
			if points(p.Attributes) {
				total += p.Value
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range data.DataPoints {
			if points(p.Attributes) {
				total += p.Value
			}
		}
	}
	return total
}

// Histogram returns the count and max of a Float64 histogram.
func Histogram(m metricdata.Metrics) (count uint64, maxValue float64) {
	data, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return 0, 0
	}
	for _, p := range data.DataPoints {
		count += p.Count
		if v, ok := p.Max.Value(); ok && v > maxValue {
			maxValue = v
		}
	}
	return count, maxValue
}

// GaugeFloat returns a Float64 gauge's value for the data point with attr.
func GaugeFloat(m metricdata.Metrics, attr attribute.KeyValue) (float64, bool) {
	data, ok := m.Data.(metricdata.Gauge[float64])
	if !ok {
		return 0, false
	}
	for _, p := range data.DataPoints {
		if v, ok := p.Attributes.Value(attr.Key); ok && v == attr.Value {
			return p.Value, true
		}
	}
	return 0, false
}

// Names returns the names of metrics, for a failure's message.
func Names(metrics map[string]metricdata.Metrics) []string {
	var out []string
	for name := range metrics {
		out = append(out, name)
	}
	return out
}
