package fairness_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// fairShareJobs is how many jobs the share tests measure over.
const fairShareJobs = 400

// fairShareTolerance is how far a tenant's measured share may be from its
// weight's share, relative (0.10: +-10%).
const fairShareTolerance = 0.10

// fairShareWeights are the weight sets the share tests measure.
var fairShareWeights = []map[string]int{
	{"heavy": 3, "light": 1},
	{"t5": 5, "t2": 2, "t1": 1},
}

// fairWeightsName names a weight set, "heavy=3,light=1".
func fairWeightsName(weights map[string]int) string {
	names := make([]string, 0, len(weights))
	for name := range weights {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return weights[names[i]] > weights[names[j]] })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%d", name, weights[name])
	}
	return strings.Join(parts, ",")
}

// requireFairShares checks that counts (jobs per tenant, over about
// fairShareJobs) are each within fairShareTolerance of the tenant's weight's
// share of the total, and returns the shares, for the log:
// "heavy 300 (0.750 of 0.750)".
func requireFairShares(t *testing.T, weights map[string]int, counts map[string]int, what string) string {
	t.Helper()
	total, sum := 0, 0
	for _, n := range counts {
		total += n
	}
	for _, w := range weights {
		sum += w
	}
	require.GreaterOrEqual(t, total, fairShareJobs, what)
	names := make([]string, 0, len(weights))
	for name := range weights {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return weights[names[i]] > weights[names[j]] })
	var parts []string
	for _, name := range names {
		want := float64(weights[name]) / float64(sum)
		got := float64(counts[name]) / float64(total)
		parts = append(parts, fmt.Sprintf("%s %d (%.3f of %.3f)", name, counts[name], got, want))
		require.InEpsilon(t, want, got, fairShareTolerance, "%s: %s took %d of %d jobs, a share of %.3f for a weight share of %.3f", what, name, counts[name], total, got, want)
	}
	for name := range counts {
		require.Contains(t, weights, name, "%s: a job of a tenant that has no jobs", what)
	}
	return strings.Join(parts, ", ")
}

// insertFairJobs inserts perTenant jobs of each tenant of weights into
// queue, interleaved (River's order alone would not separate them), as raw
// SQL in the labelled form (workflow.JobContext's stored form).
func insertFairJobs(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema, queue string, weights map[string]int, perTenant int) {
	t.Helper()
	tenants := make([]string, 0, len(weights))
	for name := range weights {
		tenants = append(tenants, name)
	}
	slices.Sort(tenants)
	_, err := pool.Exec(ctx, fmt.Sprintf(`
INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT jsonb_build_object('tenant', tenant, 'seq', seq), 'fair_test', 25,
	jsonb_build_object('bpmn', jsonb_build_object(
		'process', 'fair_process',
		'instance', tenant || '/' || seq,
		'tenant', tenant)),
	1, $1, 'available', now() - interval '1 hour'
FROM generate_series(1, $2) AS seq, unnest($3::text[]) AS tenant
ORDER BY seq, tenant`, pgx.Identifier{schema}.Sanitize()), queue, perTenant, tenants)
	require.NoError(t, err)
}

// fetchN fetches from queue with f, n jobs at a time, completing each
// fetch's jobs before the next, until at least total jobs are fetched, and
// returns the jobs fetched per tenant.
func (f *fetcher) fetchN(ctx context.Context, t *testing.T, pool *pgxpool.Pool, queue string, n, total int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	fetched := 0
	for fetched < total {
		jobs := f.fetch(ctx, t, queue, n, nil)
		require.NotEmpty(t, jobs, "the queue ran dry after %d jobs", fetched)
		require.LessOrEqual(t, len(jobs), n)
		for _, job := range jobs {
			counts[tenantOf(t, job)]++
		}
		fetched += len(jobs)
		complete(ctx, t, pool, f.schema, jobs)
	}
	return counts
}

// fairSleepWorker is the worker of the refilling-pool test: it runs 1 to 5
// ms (random), so slots free up one by one at different times and the
// producer fetches a few jobs at a time, as a busy pool does.
type fairSleepWorker struct {
	river.WorkerDefaults[fairArgs]
}

func (fairSleepWorker) Work(ctx context.Context, _ *river.Job[fairArgs]) error {
	select {
	case <-time.After(time.Duration(1+rand.IntN(5)) * time.Millisecond): //nolint:gosec // jitter
	case <-ctx.Done():
	}
	return nil
}

// TestFairByTenant: a client whose acquisition is fair
// (workflow.Acquisition.FairByTenant) gives every tenant with waiting jobs
// its turn, in its weight's share, whatever the fetch size and another
// tenant's backlog.
func TestFairByTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Shares: two tenants of weights 3 and 1, and three of weights 5, 2 and
	// 1, each with a backlog larger than the measure, fetched by one fair
	// client n jobs at a time (n = 1, 2, 3, 5, 10, 50: the round of weights
	// is cut at every place), without and with exclusivity: over the first
	// 400 jobs each tenant's share is within 10% of its weight's share (the
	// round carries from fetch to fetch, so it is exact to within a round).
	// The measured shares are logged.
	t.Run("Shares", func(t *testing.T) {
		t.Parallel()
		for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
			for _, weights := range fairShareWeights {
				t.Run(scopeName(scope)+"/"+fairWeightsName(weights), func(t *testing.T) {
					t.Parallel()
					bundle := setupEngine(ctx, t, fetchConfig(scope))
					acq := workflow.Acquisition{FairByTenant: true, TenantWeights: weights}
					require.NoError(t, bundle.Engine.EnableTenantFairness(ctx, acq))
					for _, n := range []int{1, 2, 3, 5, 10, 50} {
						queue := fmt.Sprintf("shares_%d", n)
						insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, queue, weights, fairShareJobs)
						counts := newFetcher(t, bundle, acq).fetchN(ctx, t, bundle.DBPool, queue, n, fairShareJobs)
						name := fmt.Sprintf("fetches of %d", n)
						t.Logf("%s: %s", name, requireFairShares(t, weights, counts, name))
					}
				})
			}
		}
	})

	// SharesRestart: a client that restarts (a new driver: the turns it
	// carried are lost) starts a new round, and no tenant gains more than
	// its weight per restart. One job per fetch (the size at which an
	// interrupted round weighs most), weights 3 and 1, a restart every 37
	// fetches: over 400 jobs, each tenant is within (restarts + 1) x its
	// weight of its exact share, and within 10%.
	t.Run("SharesRestart", func(t *testing.T) {
		t.Parallel()
		bundle := setupEngine(ctx, t, fetchConfig(exclusive.None))
		weights := map[string]int{"heavy": 3, "light": 1}
		acq := workflow.Acquisition{FairByTenant: true, TenantWeights: weights}
		require.NoError(t, bundle.Engine.EnableTenantFairness(ctx, acq))
		insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, "restart", weights, fairShareJobs)
		counts := map[string]int{}
		restarts := 0
		for fetched := 0; fetched < fairShareJobs; fetched += 37 {
			if fetched > 0 {
				restarts++
			}
			for tenant, n := range newFetcher(t, bundle, acq).fetchN(ctx, t, bundle.DBPool, "restart", 1, min(37, fairShareJobs-fetched)) {
				counts[tenant] += n
			}
		}
		t.Logf("%d restarts: %s", restarts, requireFairShares(t, weights, counts, "restarts"))
		for tenant, w := range weights {
			exact := fairShareJobs * w / 4
			require.InDelta(t, exact, counts[tenant], float64((restarts+1)*w), "%s: %d jobs, exactly %d", tenant, counts[tenant], exact)
		}
	})

	// SharesTwoClients: two fair clients of one queue (each with its own
	// turns), one fetching 1 job at a time and the other 2, alternating,
	// weights 3 and 1: the jobs they take together over 400 are each
	// tenant's weight share to within one round per client (2 x its
	// weight), and within 10%.
	t.Run("SharesTwoClients", func(t *testing.T) {
		t.Parallel()
		bundle := setupEngine(ctx, t, fetchConfig(exclusive.None))
		weights := map[string]int{"heavy": 3, "light": 1}
		acq := workflow.Acquisition{FairByTenant: true, TenantWeights: weights}
		require.NoError(t, bundle.Engine.EnableTenantFairness(ctx, acq))
		insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, "two", weights, fairShareJobs)
		one, two := newFetcher(t, bundle, acq), newFetcher(t, bundle, acq)
		counts := map[string]int{}
		for fetched := 0; fetched < fairShareJobs; fetched += 3 {
			for tenant, n := range one.fetchN(ctx, t, bundle.DBPool, "two", 1, 1) {
				counts[tenant] += n
			}
			for tenant, n := range two.fetchN(ctx, t, bundle.DBPool, "two", 2, 2) {
				counts[tenant] += n
			}
		}
		t.Logf("two clients: %s", requireFairShares(t, weights, counts, "two clients"))
		total := counts["heavy"] + counts["light"]
		for tenant, w := range weights {
			exact := float64(total*w) / 4
			require.InDelta(t, exact, counts[tenant], float64(2*w), "%s: %d jobs of %d", tenant, counts[tenant], total)
		}
	})

	// SharesRefillingPool: the same weights on a real client of 10 workers
	// whose jobs take 1 to 5 ms, so the producer refills its slots as they
	// free up (fetches of 1 to 10 jobs), without and with exclusivity: over
	// the first 400+ jobs fetched (whole fetch cycles, read back from the
	// recorded timeline) each tenant's share is within 10% of its weight's
	// share. The fetch sizes seen are logged with the shares.
	t.Run("SharesRefillingPool", func(t *testing.T) {
		t.Parallel()
		for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
			for _, weights := range fairShareWeights {
				t.Run(scopeName(scope)+"/"+fairWeightsName(weights), func(t *testing.T) {
					t.Parallel()
					bundle := setupEngine(ctx, t, &workflow.Config{ExclusiveScope: scope})
					acq := workflow.Acquisition{FairByTenant: true, TenantWeights: weights}
					require.NoError(t, bundle.Engine.EnableTenantFairness(ctx, acq))
					// Twice the measure per tenant: nobody runs out in it.
					insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, river.QueueDefault, weights, 2*fairShareJobs)
					driver, err := bundle.Engine.NewDriver(acq)
					require.NoError(t, err)
					workers := river.NewWorkers()
					river.AddWorker(workers, fairSleepWorker{})
					client, err := driver.NewClient(&river.Config{
						FetchCooldown: time.Millisecond,
						Logger:        slog.New(slog.DiscardHandler),
						Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
						TestOnly:      true,
						Workers:       workers,
					})
					require.NoError(t, err)
					var stopped atomic.Bool
					t.Cleanup(func() {
						if !stopped.Load() {
							_ = client.StopAndCancel(context.Background())
						}
					})
					require.NoError(t, client.Start(ctx))
					require.Eventually(t, func() bool {
						var n int
						require.NoError(t, bundle.DBPool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_job WHERE attempted_at IS NOT NULL`,
							pgx.Identifier{bundle.Schema}.Sanitize())).Scan(&n))
						return n >= fairShareJobs+50
					}, 2*time.Minute, 20*time.Millisecond)
					require.NoError(t, client.Stop(ctx))
					stopped.Store(true)

					counts, sizes, total := map[string]int{}, map[int]int{}, 0
					for _, f := range fairTimeline(ctx, t, bundle.DBPool, bundle.Schema) {
						for tenant, n := range f.byTenant {
							counts[tenant] += n
						}
						sizes[f.total]++
						total += f.total
						if total >= fairShareJobs {
							break
						}
					}
					var sizeList []string
					for _, size := range slices.Sorted(func(yield func(int) bool) {
						for size := range sizes {
							if !yield(size) {
								return
							}
						}
					}) {
						sizeList = append(sizeList, fmt.Sprintf("%dx%d", sizes[size], size))
					}
					t.Logf("fetch cycles (count x size): %s; shares: %s", strings.Join(sizeList, " "), requireFairShares(t, weights, counts, "refilling pool"))
				})
			}
		}
	})

	// ArrivalWithinOneRound: tenants of weights 3 and 2 with backlogs are
	// fetched n jobs at a time; after a few fetches, cutting the round in
	// progress somewhere, a new tenant of weight 1 arrives, first in turn
	// order (so its turn in the round in progress has passed). Its first
	// job is fetched within one round of its arrival: before the round
	// after the one in progress is over, that is within the rest of the
	// round in progress (less than the sum of the weights W = 6, its own
	// included) and the turns before its own in the next (none here), so
	// within W slots, and 2W - 1 whatever its place. For every acquisition
	// order (8), without and with exclusivity, with fetches of 1, 2 and 5
	// and arrivals at several places in the round.
	t.Run("ArrivalWithinOneRound", func(t *testing.T) {
		t.Parallel()
		weights := map[string]int{"m-heavy": 3, "m-mid": 2}
		const newcomer = "a-new"
		all := map[string]int{"m-heavy": 3, "m-mid": 2, newcomer: 1}
		const sum = 6
		cases := []struct{ n, before int }{{1, 1}, {1, 4}, {2, 2}, {5, 1}}
		for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
			t.Run(scopeName(scope), func(t *testing.T) {
				t.Parallel()
				bundle := setupEngine(ctx, t, fetchConfig(scope))
				worst := 0
				for oi, base := range acquisitionCombinations(priority.Range{}, nil) {
					if base.PriorityRange != nil || base.DeploymentAware {
						continue // orders only
					}
					acq := base
					acq.FairByTenant, acq.TenantWeights = true, all
					require.NoError(t, bundle.Engine.EnableTenantFairness(ctx, acq))
					for _, c := range cases {
						queue := fmt.Sprintf("arrival_%d_%d_%d", oi, c.n, c.before)
						insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, queue, weights, 40)
						f := newFetcher(t, bundle, acq)
						f.fetchN(ctx, t, bundle.DBPool, queue, c.n, c.before*c.n)
						insertFairJobs(ctx, t, bundle.DBPool, bundle.Schema, queue, map[string]int{newcomer: 1}, 3)
						// Jobs fetched since the arrival, up to the fetch that
						// took the new tenant's first (a fetch's jobs have no
						// order: its last place bounds the first job's).
						slots := 0
						for {
							counts := f.fetchN(ctx, t, bundle.DBPool, queue, c.n, 1)
							for _, n := range counts {
								slots += n
							}
							if counts[newcomer] > 0 {
								break
							}
							require.Less(t, slots, sum, "%s, fetches of %d, arrival after %d fetches: %d jobs since and none of the new tenant's", acquisitionName(acq), c.n, c.before, slots)
						}
						worst = max(worst, slots)
					}
				}
				t.Logf("the new tenant's first job was fetched within %d jobs of its arrival (the fetches' sizes included; one round: %d)", worst, sum)
			})
		}
	})

	// Weighted: tenants with weights 3 and 1 (600 jobs each, and a client
	// fetching up to 40 at a time) share the fetches about 3:1 while both
	// have work: over the fetch cycles before heavy's last, heavy's jobs
	// number between 2.5 and 3.5 times light's (tolerance +-1/6: a fetch of
	// n gives heavy 3*ceil(n/4) at most, rounding in heavy's favour).
	t.Run("Weighted", func(t *testing.T) {
		t.Parallel()
		bundle := setupEngine(ctx, t, nil)
		var jobs []fairArgs
		for i := range 600 {
			jobs = append(jobs, fairArgs{Tenant: "heavy", Seq: i}, fairArgs{Tenant: "light", Seq: i})
		}
		acq := workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"heavy": 3}}
		client := fairClient(ctx, t, bundle, acq, 40, jobs)
		require.NoError(t, client.Start(ctx))
		fairWaitFetched(ctx, t, bundle.DBPool, bundle.Schema, []string{"heavy"})
		require.NoError(t, client.Stop(ctx))

		fetches := fairTimeline(ctx, t, bundle.DBPool, bundle.Schema)
		heavy, light, cycles := 0, 0, 0
		for _, f := range fetches {
			heavy += f.byTenant["heavy"]
			if heavy >= 600 { // heavy's last cycle: it ran out of work in it
				break
			}
			light += f.byTenant["light"]
			cycles++
		}
		heavy = 0
		for _, f := range fetches[:cycles] {
			heavy += f.byTenant["heavy"]
		}
		require.Greater(t, cycles, 5)
		ratio := float64(heavy) / float64(light)
		t.Logf("over %d fetch cycles while both had work: heavy %d, light %d jobs, ratio %.2f", cycles, heavy, light, ratio)
		require.InDelta(t, 3.0, ratio, 0.5)
		if os.Getenv("SHOW_TIMELINE") != "" {
			for i, f := range fetches {
				t.Logf("fetch %d: %v", i+1, f.byTenant)
			}
		}
	})

	// Starvation is the starvation scenario: one tenant with a backlog
	// (20,000 jobs, inserted first, so River's order puts all of them
	// ahead), then 50 tenants with 20 jobs each, on a real client fetching
	// up to 100 jobs at a time, without and with exclusivity. From the
	// recorded timeline: in every fetch cycle, every small tenant with jobs
	// waiting got one (big never takes a job in a fetch that skips a waiting
	// tenant), and a small tenant left with jobs after the fetch got at
	// least big's count less one (round-robin); the 1,000 small jobs are all
	// fetched while the big tenant has run fewer than 200 of its 20,000 (it
	// takes the slots the small tenants leave when they run out), in the
	// first few cycles (at most 30; 1,000 jobs at up to 100 per fetch need
	// 11 at least; fetches are smaller when few workers are free). Stock
	// River would run the 20,000 first.
	t.Run("Starvation", func(t *testing.T) {
		longtest.Skip(t)
		t.Parallel()
		const (
			bigJobs     = 20000
			smallCount  = 50
			smallJobs   = 20
			maxWorkers  = 100
			maxCycles   = 30
			maxBigSteal = 200
		)
		for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
			t.Run(scopeName(scope), func(t *testing.T) {
				bundle := setupEngine(ctx, t, &workflow.Config{ExclusiveScope: scope})
				var jobs []fairArgs
				for i := range bigJobs {
					jobs = append(jobs, fairArgs{Tenant: "big", Seq: i})
				}
				var small []string
				for s := range smallCount {
					tenant := fmt.Sprintf("small-%02d", s)
					small = append(small, tenant)
					for i := range smallJobs {
						jobs = append(jobs, fairArgs{Tenant: tenant, Seq: i})
					}
				}
				client := fairClient(ctx, t, bundle, workflow.Acquisition{FairByTenant: true}, maxWorkers, jobs)
				require.NoError(t, client.Start(ctx))
				fairWaitFetched(ctx, t, bundle.DBPool, bundle.Schema, small)
				require.NoError(t, client.Stop(ctx))

				fetches := fairTimeline(ctx, t, bundle.DBPool, bundle.Schema)
				left := map[string]int{}
				for _, tenant := range small {
					left[tenant] = smallJobs
				}
				bigBefore, lastCycle := 0, 0
				for i, f := range fetches {
					if len(left) == 0 {
						break
					}
					// Round-robin: a small tenant that still has jobs after
					// the fetch got its turn in every round big got one.
					for tenant, n := range f.byTenant {
						if tenant != "big" && left[tenant] > n {
							require.LessOrEqual(t, f.byTenant["big"], n+1,
								"fetch %d took %d of big's jobs but only %d of %s's, which had %d waiting", i+1, f.byTenant["big"], n, tenant, left[tenant])
						}
					}
					// A fetch with room for a round over every tenant still
					// waiting serves them all before big gets a job. A
					// smaller fetch (the producer asks only for its free
					// slots) serves as many tenants as it has room for, and
					// the next fetch starts its turns after the last one
					// served.
					if f.total > len(left) {
						for tenant := range left {
							if f.byTenant[tenant] == 0 {
								require.Zero(t, f.byTenant["big"], "fetch %d (%d jobs) took big's jobs but none of %s's", i+1, f.total, tenant)
							}
						}
					}
					bigBefore += f.byTenant["big"]
					for tenant, n := range f.byTenant {
						if tenant == "big" {
							continue
						}
						left[tenant] -= n
						if left[tenant] == 0 {
							delete(left, tenant)
						}
					}
					lastCycle = i + 1
				}
				require.Empty(t, left)
				t.Logf("the %d small jobs were all fetched by fetch cycle %d, while big ran %d of its %d", smallCount*smallJobs, lastCycle, bigBefore, bigJobs)
				require.LessOrEqual(t, lastCycle, maxCycles)
				require.Less(t, bigBefore, maxBigSteal)
			})
		}
	})
}
