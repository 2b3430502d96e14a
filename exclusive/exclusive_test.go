package exclusive

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
		w := NewWaker(50*time.Millisecond, func(string) { sends.Add(1) })
		defer w.Close()
		for range 100 {
			w.Wake("q")
		}
		require.Eventually(t, func() bool { return sends.Load() == 2 }, 5*time.Second, time.Millisecond,
			"100 wake-ups within one cooldown: one leading and one trailing send")
		time.Sleep(150 * time.Millisecond)
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

func TestCoalescer(t *testing.T) {
	t.Parallel()

	t.Run("FlushesAfterDelay", func(t *testing.T) {
		t.Parallel()
		flushed := make(chan []int, 10)
		c := NewCoalescer(20*time.Millisecond, func(batch []int) { flushed <- batch })
		start := time.Now()
		c.Add(1)
		c.Add(2)
		c.Add(3)
		select {
		case batch := <-flushed:
			require.Equal(t, []int{1, 2, 3}, batch, "items added within the delay go together")
			require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
		case <-time.After(5 * time.Second):
			t.Fatal("no flush")
		}
		c.Add(4)
		require.Equal(t, []int{4}, <-flushed, "the next item arms a new flush")
	})

	t.Run("TakeFirst", func(t *testing.T) {
		t.Parallel()
		var flushes atomic.Int64
		c := NewCoalescer(30*time.Millisecond, func([]string) { flushes.Add(1) })
		c.Add("a")
		c.Add("b")
		require.Equal(t, []string{"a", "b"}, c.Take())
		require.Nil(t, c.Take())
		time.Sleep(60 * time.Millisecond)
		require.Zero(t, flushes.Load(), "nothing left to flush: each item goes out once")

		c.Requeue([]string{"a"})
		require.Eventually(t, func() bool { return flushes.Load() == 1 }, 5*time.Second, time.Millisecond)
	})

	t.Run("ConcurrentItemsEachHandedOutOnce", func(t *testing.T) {
		t.Parallel()
		var (
			mu  sync.Mutex
			got []int
		)
		c := NewCoalescer(time.Millisecond, func(batch []int) {
			mu.Lock()
			got = append(got, batch...)
			mu.Unlock()
		})
		var wg sync.WaitGroup
		for i := range 1000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Add(i)
				if i%10 == 0 {
					taken := c.Take()
					mu.Lock()
					got = append(got, taken...)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) == 1000
		}, 5*time.Second, time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(got)
		for i, v := range got {
			require.Equal(t, i, v)
		}
	})
}
