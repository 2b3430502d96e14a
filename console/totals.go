package console

// Totals on the lists. Counting every row a filter matches on each page
// load would read a million jobs or events, so each list counts with the
// listing it shows, up to a cap and within countTimeout, and says "at least"
// or "not counted" past them: the jobs (up to search.MaxCount) and open
// incidents are counted by their own statements, the timers, deployments
// and process instances page through their listing (up to totalCap, and
// instanceCap instances), the events sum the outbox rows' event counts
// (events.CountRows rows), and the queues are all on one page.

import (
	"context"
	"errors"
	"strconv"

	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// total is a list's total as the page states it.
type total struct {
	// ID is the element id of the sentence ("timers-total").
	ID string
	// N is the count; AtLeast says the count stopped at a cap (N or more),
	// NotCounted that it did not finish within countTimeout.
	N          int64
	AtLeast    bool
	NotCounted bool
	// Noun names what is counted, in the plural ("timers").
	Noun string
}

// totalCap bounds the counts that page through a listing.
const totalCap = 10_000

// instanceCap bounds the count of process instances: each page of them
// reads jobs (see search.Instances).
const instanceCap = 1_000

// countPages counts the rows of a listing, page by page (next returns how
// many rows a page held and the next page's cursor, "" after the last), up
// to limit rows and within countTimeout.
func countPages(ctx context.Context, id, noun string, limit int64, next func(ctx context.Context, cursor string) (int, string, error)) (*total, error) {
	t := &total{ID: id, Noun: noun}
	countCtx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	cursor := ""
	for {
		n, c, err := next(countCtx, cursor)
		if err != nil {
			if countCtx.Err() != nil && ctx.Err() == nil {
				t.NotCounted = true
				return t, nil
			}
			return nil, err
		}
		t.N += int64(n)
		if c == "" {
			return t, nil
		}
		if t.N >= limit {
			t.AtLeast = true
			return t, nil
		}
		cursor = c
	}
}

func (h *Handler) countTimers(ctx context.Context, f *workflow.TimerFilter) (*total, error) {
	return countPages(ctx, "timers-total", "timers", totalCap, func(ctx context.Context, cursor string) (int, string, error) {
		after, _ := strconv.ParseInt(cursor, 10, 64)
		page, err := h.engine.TimersPage(ctx, f, after, workflow.MaxPageSize)
		if err != nil || len(page) < workflow.MaxPageSize {
			return len(page), "", err
		}
		return len(page), strconv.FormatInt(page[len(page)-1].ID, 10), nil
	})
}

func (h *Handler) countInstances(ctx context.Context, f *search.Filter) (*total, error) {
	// An instance whose jobs are far apart may show again on a later page
	// (see search.Instances): each is counted once.
	seen := make(map[string]struct{})
	return countPages(ctx, "instances-total", "process instances", instanceCap, func(ctx context.Context, cursor string) (int, string, error) {
		after, _ := strconv.ParseInt(cursor, 10, 64)
		page, err := h.engine.SearchProcessInstances(ctx, f, after, workflow.MaxPageSize)
		if err != nil {
			return 0, "", err
		}
		added := 0
		for _, in := range page.Instances {
			if _, ok := seen[in.ID]; !ok {
				seen[in.ID] = struct{}{}
				added++
			}
		}
		next := ""
		if page.Next != 0 {
			next = strconv.FormatInt(page.Next, 10)
		}
		return added, next, nil
	})
}

func (h *Handler) countDeployments(ctx context.Context) (*total, error) {
	handle := h.engine.Deployments()
	return countPages(ctx, "deployments-total", "deployments", totalCap, func(ctx context.Context, cursor string) (int, string, error) {
		page, err := handle.List(ctx, deployment.ListParams{After: cursor, Limit: deployment.MaxListLimit})
		if err != nil {
			return 0, "", err
		}
		return len(page.Deployments), page.Cursor, nil
	})
}

func (h *Handler) countEvents(ctx context.Context, instance string) (*total, error) {
	t := &total{ID: "events-total", Noun: "events"}
	countCtx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	var err error
	t.N, t.AtLeast, err = h.engine.CountEvents(countCtx, instance)
	if err != nil && countCtx.Err() != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		return &total{ID: t.ID, Noun: t.Noun, NotCounted: true}, nil
	}
	return t, err
}
