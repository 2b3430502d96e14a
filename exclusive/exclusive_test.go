package exclusive

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		scope     Scope
		exclusive bool
		pi, root  string
		want      string
		ok        bool
	}{
		{"off", None, true, "pi", "root", "", false},
		{"not exclusive", ProcessInstance, false, "pi", "root", "", false},
		{"no instance", ProcessInstance, true, "", "", "", false},
		{"instance", ProcessInstance, true, "pi", "root", "pi", true},
		{"instance without root", ProcessInstance, true, "pi", "", "pi", true},
		{"root", RootProcessInstance, true, "pi", "root", "root", true},
		{"root defaults to instance", RootProcessInstance, true, "pi", "", "pi", true},
		{"root without instance", RootProcessInstance, true, "", "", "", false},
		{"unknown scope", Scope(7), true, "pi", "root", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, ok := Key(tc.scope, tc.exclusive, tc.pi, tc.root)
			require.Equal(t, tc.want, key)
			require.Equal(t, tc.ok, ok)
		})
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	require.False(t, None.Enabled())
	require.True(t, ProcessInstance.Enabled())
	require.True(t, RootProcessInstance.Enabled())
	require.NoError(t, RootProcessInstance.Validate())
	require.Error(t, Scope(-1).Validate())
	require.Equal(t, "root process instance", RootProcessInstance.String())
	require.Equal(t, "exclusive.Scope(9)", Scope(9).String())

	// The zero value enforces Camunda's rule; None is an explicit opt-out.
	var zero Scope
	require.Equal(t, ProcessInstance, zero)
	require.NotEqual(t, None, zero)
	for _, s := range Scopes {
		require.NoError(t, s.Validate())
		parsed, err := ParseScope(s.Name())
		require.NoError(t, err)
		require.Equal(t, s, parsed)
		parsed, err = ParseScope(s.String())
		require.NoError(t, err)
		require.Equal(t, s, parsed)
	}
	require.Equal(t, "root-process-instance", RootProcessInstance.Name())
	_, err := ParseScope("instance")
	require.ErrorContains(t, err, `unknown scope "instance"`)
}

func TestOverlaps(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	spans := []Span{
		{Key: "a", JobID: 1, Start: at(0), End: at(10)},
		{Key: "a", JobID: 2, Start: at(10), End: at(20)}, // touches 1: fine
		{Key: "a", JobID: 3, Start: at(15), End: at(16)}, // inside 2
		{Key: "b", JobID: 4, Start: at(0), End: at(30)},
		{Key: "c", JobID: 5, Start: at(5), End: at(6)},
		{Key: "", JobID: 6, Start: at(0), End: at(30)}, // no key: never overlaps
		{Key: "", JobID: 7, Start: at(0), End: at(30)},
	}
	overlaps := Overlaps(spans)
	require.Len(t, overlaps, 1)
	require.Equal(t, int64(2), overlaps[0].First.JobID)
	require.Equal(t, int64(3), overlaps[0].Second.JobID)
	require.Contains(t, overlaps[0].String(), `key "a"`)

	require.Empty(t, Overlaps(spans[:2]))
}

func TestTimeline(t *testing.T) {
	t.Parallel()
	var tl Timeline
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := tl.Begin("k", int64(i), 1)
			time.Sleep(time.Millisecond)
			end()
		}()
	}
	wg.Wait()
	require.Len(t, tl.Spans(), 10)
	require.NotEmpty(t, Overlaps(tl.Spans()), "ten concurrent spans of one key overlap")
}

func TestWaker(t *testing.T) {
	t.Parallel()

	t.Run("LeadingEdgeAtOnce", func(t *testing.T) {
		t.Parallel()
		sent := make(chan string, 10)
		w := NewWaker(time.Hour, func(target string) { sent <- target })
		defer w.Close()
		w.Wake("q")
		select {
		case got := <-sent:
			require.Equal(t, "q", got)
		case <-time.After(5 * time.Second):
			t.Fatal("no leading-edge send")
		}
		w.Wake("other")
		require.Equal(t, "other", <-sent, "targets are independent")
	})

	t.Run("CoalescesAndSendsTrailingEdge", func(t *testing.T) {
		t.Parallel()
		var sends atomic.Int64
		// A cooldown long enough that a loaded machine still makes the 100
		// calls within it.
		const cooldown = 500 * time.Millisecond
		w := NewWaker(cooldown, func(string) { sends.Add(1) })
		defer w.Close()
		for range 100 {
			w.Wake("q")
		}
		require.Eventually(t, func() bool { return sends.Load() == 2 }, 5*time.Second, time.Millisecond,
			"100 wake-ups within one cooldown: one leading and one trailing send")
		time.Sleep(3 * cooldown)
		require.Equal(t, int64(2), sends.Load(), "nothing more without new wake-ups")

		w.Wake("q")
		require.Eventually(t, func() bool { return sends.Load() == 3 }, 5*time.Second, time.Millisecond,
			"after an idle cooldown the next wake-up is sent at once")
	})

	t.Run("ClosedDropsWakeUps", func(t *testing.T) {
		t.Parallel()
		var sends atomic.Int64
		w := NewWaker(time.Millisecond, func(string) { sends.Add(1) })
		w.Close()
		w.Wake("q")
		time.Sleep(20 * time.Millisecond)
		require.Zero(t, sends.Load())
	})
}

func TestBatcher(t *testing.T) {
	t.Parallel()

	t.Run("GroupsConcurrentRequests", func(t *testing.T) {
		t.Parallel()
		var (
			mu      sync.Mutex
			batches []int
		)
		b := NewBatcher(10, func(_ context.Context, items []int) ([]int, error) {
			mu.Lock()
			batches = append(batches, len(items))
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			out := make([]int, len(items))
			for i, v := range items {
				out[i] = v * 2
			}
			return out, nil
		})
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := b.Do(context.Background(), i)
				assert.NoError(t, err)
				assert.Equal(t, 2*i, got)
			}()
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, n := range batches {
			require.LessOrEqual(t, n, 10, "never more than maxBatch")
			total += n
		}
		require.Equal(t, 100, total)
		require.Less(t, len(batches), 100, "concurrent requests share flushes")
	})

	t.Run("AloneFlushesAtOnce", func(t *testing.T) {
		t.Parallel()
		calls := 0
		b := NewBatcher(0, func(_ context.Context, items []string) ([]string, error) {
			calls++
			return items, nil
		})
		for i := range 3 {
			got, err := b.Do(context.Background(), fmt.Sprint(i))
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), got)
		}
		require.Equal(t, 3, calls)
	})

	t.Run("ErrorsReachEveryRequestOfTheBatch", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		b := NewBatcher(0, func(context.Context, []int) ([]int, error) { return nil, boom })
		_, err := b.Do(context.Background(), 1)
		require.ErrorIs(t, err, boom)

		short := NewBatcher(0, func(context.Context, []int) ([]int, error) { return nil, nil })
		_, err = short.Do(context.Background(), 1)
		require.ErrorIs(t, err, errBatchResults)
	})
}
