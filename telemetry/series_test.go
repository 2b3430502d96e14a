package telemetry

import (
	"fmt"
	"sync"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

// A series is made once per key, found without the lock once the read map
// is rebuilt, and past maxCachedSeries made but not kept.
func TestSeriesCache(t *testing.T) {
	var c seriesCache
	key := func(i int) []byte { return fmt.Appendf(nil, "key-%d", i) }
	require.Nil(t, c.load(key(0)))
	first := c.store(key(0), newSeries(attribute.NewSet(AttrQueue.String("a"))))
	require.Same(t, first, c.load(key(0)), "the first miss rebuilds the empty read map")
	require.Same(t, first, c.store(key(0), newSeries(attribute.NewSet(AttrQueue.String("b")))), "a key keeps its first series")

	for i := 1; i < maxCachedSeries; i++ {
		c.store(key(i), newSeries(attribute.NewSet(AttrQueue.Int(i))))
	}
	// The read map lags by fewer misses than it has entries: a few more
	// misses of known keys bring it up to date.
	for i := 0; c.load(key(maxCachedSeries-1)) == nil; i++ {
		require.Less(t, i, maxCachedSeries)
		c.store(key(maxCachedSeries-1), nil)
	}
	for i := range maxCachedSeries {
		s := c.load(key(i))
		require.NotNil(t, s, "key %d", i)
		v, _ := s.set.Value(AttrQueue)
		if i > 0 {
			require.Equal(t, int64(i), v.AsInt64())
		}
	}
	extra := newSeries(attribute.NewSet(AttrQueue.String("extra")))
	require.Same(t, extra, c.store(key(maxCachedSeries), extra), "past the bound: measured")
	require.Nil(t, c.load(key(maxCachedSeries)), "and not kept")
	require.Len(t, c.all, maxCachedSeries)
}

// Clients measuring at once get one series per set of attributes, each
// with the attributes of its key.
func TestSeriesOfConcurrent(t *testing.T) {
	tel, err := New(Config{}, IdentifyFunc(func(*rivertype.JobRow) Identity { return Identity{} }), nil)
	require.NoError(t, err)
	const goroutines, definitions = 4, 50
	got := make([][]*series, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for round := range 20 {
				for d := range definitions {
					c := Class{HasContext: true, ProcessDefinitionKey: fmt.Appendf(nil, "def-%d", d), RetryCycle: []byte("R1/PT1S")}
					s := seriesOf(tel, "default", "kind", &c, false, AttrRetryCycle, c.RetryCycle)
					if round == 0 {
						got[g] = append(got[g], s)
					} else if s != got[g][d] {
						t.Errorf("definition %d: another series in round %d", d, round)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for d := range definitions {
		for g := 1; g < goroutines; g++ {
			require.Same(t, got[0][d], got[g][d], "definition %d", d)
		}
		want := attribute.NewSet(AttrQueue.String("default"), AttrKind.String("kind"),
			AttrProcessDefinition.String(fmt.Sprintf("def-%d", d)), AttrRetryCycle.String("R1/PT1S"))
		require.True(t, want.Equals(&got[0][d].set), "definition %d: %v", d, got[0][d].set.ToSlice())
	}
}
