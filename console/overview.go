package console

// The overview page (/): counts per process definition and job definition
// by state, open incidents, clients and their health, queues, and charts of
// jobs completed and failed and incidents opened over time, drawn on the
// server as SVG. The page's data-refresh section is reloaded in place by
// static/refresh.js (a few lines, under the console's CSP), without a full
// page reload.

import (
	"fmt"
	"net/http"
	"time"

	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/overview"
)

// windows are the charts' windows an operator can pick, with their step.
var windows = []struct {
	Name         string
	Window, Step time.Duration
}{
	{"1h", time.Hour, 5 * time.Minute},
	{"6h", 6 * time.Hour, 15 * time.Minute},
	{"24h", 24 * time.Hour, time.Hour},
	{"7d", 7 * 24 * time.Hour, 6 * time.Hour},
}

// refreshEvery is how often the overview reloads its data, in seconds.
const refreshEvery = 10

type overviewData struct {
	*overview.Overview
	Window       string
	Windows      []string
	Refresh      int
	Throughput   *chart
	Incidents    *chart
	Alive, Dead  int
	Clients      []*liveness.Session
	Unworked     int
	GeneratedAt  time.Time
	HasLiveness  bool
	QueuesPaused int
}

// chart is a bar chart drawn as SVG: one bar (or a stack of two) per
// bucket.
type chart struct {
	Title         string
	Width, Height int
	Max           int64
	Bars          []bar
	// Ticks label the time axis.
	Ticks []tick
}

type bar struct {
	X, Y, W, H int
	Class      string
	Title      string
}

type tick struct {
	X     int
	Label string
}

const (
	chartWidth  = 560
	chartHeight = 140
	chartTop    = 10
	chartBottom = 20
)

// newChart draws series (one value per bucket each, stacked bottom-up in
// the order given, with their CSS classes and names).
func newChart(title string, buckets []*overview.Bucket, step time.Duration, classes, names []string, values func(*overview.Bucket) []int64) *chart {
	c := &chart{Title: title, Width: chartWidth, Height: chartHeight}
	for _, b := range buckets {
		var sum int64
		for _, v := range values(b) {
			sum += v
		}
		c.Max = max(c.Max, sum)
	}
	n := max(len(buckets), 1)
	slot := chartWidth / n
	w := max(slot-2, 1)
	plot := chartHeight - chartTop - chartBottom
	every := max(n/6, 1)
	for i, b := range buckets {
		x := i * slot
		base := chartHeight - chartBottom
		for j, v := range values(b) {
			if v == 0 || c.Max == 0 {
				continue
			}
			h := max(int(v*int64(plot)/c.Max), 1)
			base -= h
			c.Bars = append(c.Bars, bar{X: x, Y: base, W: w, H: h, Class: classes[j],
				Title: fmt.Sprintf("%s: %d %s from %s", title, v, names[j], b.Start.UTC().Format("2006-01-02 15:04Z"))})
		}
		if i%every == 0 {
			layout := "15:04"
			if step >= 6*time.Hour {
				layout = "01-02 15h"
			}
			c.Ticks = append(c.Ticks, tick{X: x, Label: b.Start.UTC().Format(layout)})
		}
	}
	return c
}

func (h *Handler) overviewPage(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("window")
	if name == "" {
		name = "24h"
	}
	var window, step time.Duration
	names := make([]string, len(windows))
	for i, win := range windows {
		names[i] = win.Name
		if win.Name == name {
			window, step = win.Window, win.Step
		}
	}
	if window == 0 {
		h.renderError(w, r, http.StatusBadRequest, fmt.Errorf("query parameter window %q is not one of %v", name, names))
		return
	}
	ctx := r.Context()
	o, err := h.engine.Overview(ctx, window, step)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	sessions, err := h.engine.ClientSessions(ctx)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &overviewData{Overview: o, Window: name, Windows: names, Refresh: refreshEvery, GeneratedAt: time.Now().UTC(), HasLiveness: len(sessions) > 0}
	for _, s := range sessions {
		switch {
		case s.Alive:
			data.Alive++
			data.Clients = append(data.Clients, s)
		case s.Superseded == nil:
			data.Dead++
			data.Clients = append(data.Clients, s)
		}
	}
	for _, q := range o.Queues {
		if !q.Worked {
			data.Unworked++
		}
		if q.PausedAt != nil {
			data.QueuesPaused++
		}
	}
	data.Throughput = newChart("Jobs finished", o.Buckets, step, []string{"bar-completed", "bar-failed"}, []string{"completed", "failed"},
		func(b *overview.Bucket) []int64 { return []int64{b.Completed, b.Failed} })
	data.Incidents = newChart("Incidents opened", o.Buckets, step, []string{"bar-incident"}, []string{"opened"},
		func(b *overview.Bucket) []int64 { return []int64{b.IncidentsOpened} })
	h.render(w, r, http.StatusOK, "overview", "Overview", data)
}
