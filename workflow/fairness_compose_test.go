package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

// fairModelJob is a job of the fair composition model: a modelJob, its
// tenant as the fetch groups it ("" for none or a value that is not a
// string),
// and whether it is due at the fetches' now.
type fairModelJob struct {
	*modelJob
	tenant string
	isDue  bool
}

// fairModelJobs gives the jobs of modelJobs tenants: an instance's jobs
// share the instance's tenant (instances 2 and 6, of deployment d3, are
// tenant "tc"'s, so a client aware of d1 and d2 only finds no job of "tc"
// it may take, though "tc" waits); jobs of no instance get a random tenant
// or none; the rows with corrupt contexts keep theirs (no tenant). It adds
// jobs with a corrupt tenant (a number, null) and jobs of tenant "te" that
// are not due yet, so "te" has waiting jobs but none to fetch.
func fairModelJobs(rng *rand.Rand, prefix string, base time.Time) []*fairModelJob {
	instanceTenants := []string{"ta", "tb", "tc", ""}
	var jobs []*fairModelJob
	for _, job := range modelJobs(rng, prefix, base) {
		fj := &fairModelJob{modelJob: job, isDue: true}
		var meta map[string]any
		if json.Unmarshal([]byte(job.metadata), &meta) == nil {
			jc, ok := meta["bpmn"].(map[string]any)
			compact, isCompact := meta["bpmn"].([]any)
			if isCompact {
				jc, ok = map[string]any{}, true
				for i, v := range compact[:min(len(compact), len(compactFields))] {
					if v != nil {
						jc[compactFields[i]] = v
					}
				}
			}
			if ok {
				if pi, ok := jc["process_instance_id"].(string); ok && jc["process_definition_key"] == "p" {
					var k int
					_, err := fmt.Sscanf(pi[len(prefix):], "inst-%d", &k)
					if err != nil {
						panic(err)
					}
					fj.tenant = instanceTenants[k%len(instanceTenants)]
				} else if jc["process_definition_key"] == "p" {
					fj.tenant = []string{"ta", "tb", "td", ""}[rng.IntN(4)]
				}
				if fj.tenant != "" {
					jc["tenant_id"] = fj.tenant
					if isCompact {
						meta["bpmn"] = compactForm(jc)
					}
					job.metadata = mustMarshal(meta)
				}
			}
		}
		jobs = append(jobs, fj)
	}
	extra := func(metadata, tenant string, due bool) {
		job := &modelJob{
			metadata:  metadata,
			due:       base.Add(-time.Duration(rng.IntN(61)) * time.Minute),
			riverPrio: 1 + rng.IntN(4),
			keys:      map[exclusive.Scope]string{},
		}
		if !due {
			job.due = base.Add(time.Hour)
		}
		jobs = append(jobs, &fairModelJob{modelJob: job, tenant: tenant, isDue: due})
	}
	extra(`{"bpmn": {"tenant_id": 42}}`, "", true)
	extra(`{"bpmn": [null, null, null, null, 4, null, null, null, null, 42]}`, "", true)
	jobs[len(jobs)-1].prio = 4
	extra(`{"bpmn": {"tenant_id": null, "job_type": "timer"}}`, "", true)
	jobs[len(jobs)-1].timer = true
	extra(`{"bpmn": {"tenant_id": "te"}}`, "te", false)
	extra(`{"bpmn": [null, null, null, null, 9, null, null, null, null, "te"]}`, "te", false)
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	return jobs
}

// fairModelPick is a job a fair fetch reads: its group (tenant) and round.
type fairModelPick struct {
	job   *fairModelJob
	round int
}

// fairModelTurn is where the model's fetches are in their rounds: the round
// in progress, the last tenant served in it and how many of that round's
// slots it took (none before the first fetch: nil).
type fairModelTurn struct {
	round  int
	tenant string
	used   int
}

// modelFairFetch is what one fair fetch of up to limit jobs should lock,
// with no key held, written from the documented semantics (workflow/
// fairness.go, fairTurns), not from the SQL: the groups are the tenants
// with waiting (available) jobs in the queue, due or not, admitted or not;
// a tenant of weight w has w slots per round, numbered across rounds, and
// takes its turn in a round after the tenants before it in byte order; in
// the round in progress (turn), the tenants before turn's tenant have had
// their turn, its tenant took turn.used slots, and the tenants after it
// none. A fetch reads rounds = ceil(n / sum of weights) + 1 rounds from
// the round in progress, n being limit (with exclusivity: the lookahead):
// each
// group's jobs the client may take, in the client's order, from its start
// slot to the end of the last round read, at most n; the picks are ranked
// by round, then tenant (byte order), then the client's order; without
// exclusivity the first limit picks are taken; with exclusivity the first n
// picks are read and, in rank order, a job with a key is taken only if it
// is its key's head (the first in the client's order of the key's waiting
// jobs the client may take), up to limit. It also returns where the next
// fetch starts: a tenant that took c jobs from slot s last served in round
// (s+c-1) / w; the highest such round is in progress, and its last tenant
// in byte order the last served.
func modelFairFetch(acq Acquisition, scope exclusive.Scope, waiting []*fairModelJob, limit, lookahead int, turn *fairModelTurn) ([]int64, *fairModelTurn) {
	weight := func(tenant string) int { return max(acq.TenantWeights[tenant], 1) }
	start := func(tenant string) int {
		if turn == nil {
			return 0
		}
		w := weight(tenant)
		if tenant < turn.tenant {
			return (turn.round + 1) * w // had its turn in the round in progress
		}
		if tenant == turn.tenant {
			return turn.round*w + turn.used
		}
		return turn.round * w
	}
	current := 0
	if turn != nil {
		current = turn.round
	}
	groups := map[string]bool{}
	for _, job := range waiting {
		groups[job.tenant] = true
	}
	admitted := map[string][]*fairModelJob{}
	sumWeights := 0
	for tenant := range groups {
		sumWeights += weight(tenant)
	}
	for _, job := range waiting {
		if job.isDue && modelAdmits(acq, job.modelJob) {
			admitted[job.tenant] = append(admitted[job.tenant], job)
		}
	}
	n := limit
	if scope.Enabled() {
		n = lookahead
	}
	var picks []fairModelPick
	if sumWeights > 0 {
		rounds := (n+sumWeights-1)/sumWeights + 1
		for tenant, jobs := range admitted {
			slices.SortFunc(jobs, func(a, b *fairModelJob) int { return modelCompare(acq, a.modelJob, b.modelJob) })
			first, w := start(tenant), weight(tenant)
			for i, job := range jobs[:min(len(jobs), n, max((current+rounds)*w-first, 0))] {
				picks = append(picks, fairModelPick{job: job, round: (first + i) / w})
			}
		}
	}
	slices.SortFunc(picks, func(a, b fairModelPick) int {
		return cmp.Or(cmp.Compare(a.round, b.round), strings.Compare(a.job.tenant, b.job.tenant), modelCompare(acq, a.job.modelJob, b.job.modelJob))
	})
	picks = picks[:min(len(picks), n)]
	var taken []*fairModelJob
	for _, pick := range picks {
		if len(taken) == limit {
			break
		}
		if key := pick.job.keys[scope]; scope.Enabled() && key != "" {
			head := true
			for _, other := range waiting {
				if other.keys[scope] == key && other.isDue && modelAdmits(acq, other.modelJob) && modelCompare(acq, other.modelJob, pick.job.modelJob) < 0 {
					head = false
				}
			}
			if !head {
				continue
			}
		}
		taken = append(taken, pick.job)
	}
	if len(taken) == 0 {
		return nil, turn
	}
	counts := map[string]int{}
	for _, job := range taken {
		counts[job.tenant]++
	}
	var next *fairModelTurn
	for tenant, count := range counts {
		w := weight(tenant)
		last := start(tenant) + count - 1
		if round := last / w; next == nil || round > next.round || (round == next.round && tenant > next.tenant) {
			next = &fairModelTurn{round: round, tenant: tenant, used: last - round*w + 1}
		}
	}
	ids := make([]int64, len(taken))
	for i, job := range taken {
		ids[i] = job.id
	}
	return ids, next
}

// TestFairFetchComposesModel is TestFetchComposesModel for fair clients:
// FairByTenant with every combination of the other acquisition options
// (priority, range, deployments, timers first, due date), without and with
// tenant weights, under every exclusive scope (3 x 24 x 2 clients, each on a
// queue of its own), against the Go model modelFairFetch. Each fetch must
// lock exactly the model's jobs: two fetches in three take 1 to 5 jobs,
// fewer than the tenants, so turns carry across fetches, the third 8 to 23,
// more than the sum of the weights, so it reads several rounds. Fetched jobs
// are completed and the next fetch follows, until nothing is left that the
// client may take.
// `make test` checks each combination under one scope in turn
// (inShortSample), `make test-long` under every scope.
func TestFairFetchComposesModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	combos := acquisitionCombinations(priority.Range{Min: 0, Max: 10}, []string{"d1", "d2"})

	for si, scope := range allScopes {
		t.Run(scopeName(scope), func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: scope})
			require.NoError(t, engine.EnableTenantFairness(ctx, combos...))
			ident := pgx.Identifier{schema}.Sanitize()
			fetches := 0
			for ci, base0 := range combos {
				if !inShortSample(ci, si, len(allScopes)) {
					continue
				}
				for wi, weights := range []map[string]int{nil, {"ta": 3, "": 2, "tb": 2}} {
					acq := base0
					acq.FairByTenant, acq.TenantWeights = true, weights
					name := fmt.Sprintf("%s/weights=%t", acquisitionName(acq), weights != nil)
					queue := fmt.Sprintf("q%d-%d", ci, wi)
					rng := rand.New(rand.NewPCG(uint64(ci), uint64(scope)*2+uint64(wi))) //nolint:gosec // reproducible test data
					jobs := fairModelJobs(rng, fmt.Sprintf("c%d-%d-", ci, wi), base)
					for _, job := range jobs {
						require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`
							INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
							VALUES ('{}', 'compose_test', 25, $1, $2, $3, 'available', $4) RETURNING id`, ident),
							job.metadata, job.riverPrio, queue, job.modelJob.due).Scan(&job.id))
					}

					driver := testDriver(t, engine, acq)
					p := newPilot(driver)
					now := base.Add(time.Minute)
					waiting := slices.Clone(jobs)
					var turn *fairModelTurn
					for round := 0; ; round++ {
						require.Less(t, round, 200, "%s: the fetches do not drain the queue", name)
						limit := 1 + rng.IntN(5) // fewer than the tenants: turns carry over
						if round%3 == 2 {
							limit = 8 + rng.IntN(16) // more than the sum of weights: several rounds
						}
						var want []int64
						want, turn = modelFairFetch(acq, scope, waiting, limit, exclusive.DefaultLookahead, turn)
						res, err := p.JobGetAvailable(ctx, driver.GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
							ClientID: "model", MaxAttemptedBy: 10, MaxToLock: limit, Now: &now, Queue: queue, Schema: schema,
						})
						require.NoError(t, err)
						fetches++
						got := jobIDs(res.Jobs)
						require.ElementsMatch(t, want, got, "%s, fetch %d (limit %d)", name, round, limit)
						if len(got) == 0 {
							break
						}
						_, err = engine.dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`, ident), got)
						require.NoError(t, err)
						waiting = slices.DeleteFunc(waiting, func(job *fairModelJob) bool { return slices.Contains(got, job.id) })
					}
					for _, job := range waiting {
						require.False(t, job.isDue && modelAdmits(acq, job.modelJob), "%s: job %d (%s) left behind", name, job.id, job.metadata)
					}
				}
			}
			t.Logf("%d fetches agree with the model", fetches)
		})
	}
}
