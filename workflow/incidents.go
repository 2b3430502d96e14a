package workflow

import (
	"context"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
)

// IncidentTypeFailedJob is the type of the incident opened when a job with a
// job context runs out of executions and River discards it.
const IncidentTypeFailedJob = incident.TypeFailedJob

// MaxIncidents caps how many incidents OpenIncidents, AllIncidents and
// JobIncidents return.
const MaxIncidents = 10_000

// Incident is an operator-facing record that a job needs attention, kept in
// table river_bpmn_incident (package incident). Incidents are opened and
// resolved by triggers in the transaction that changes the job (see
// job.Jobs.SetRetries); a job never has two open incidents.
type Incident = incident.Incident

// IncidentGroup is the incidents of one error (its first line).
type IncidentGroup = incident.Group

// Incidents returns the handle on the schema's incidents (package
// incident): List pages through them with Camunda Cockpit's filters (job
// definition, activity, process definition, tenant, error text, opened
// before, instance prefix, one job, open or resolved), Groups groups them
// by error, Count counts what a bulk retry would walk.
func (e *Engine) Incidents() *incident.Incidents { return e.incidents.get(e.newIncidents) }

// newIncidents makes the engine's incidents handle.
func (e *Engine) newIncidents() *incident.Incidents {
	return incident.New(incident.Config{DB: e.db(), Schema: e.config.Schema})
}

// IncidentSearch selects incidents as Camunda Cockpit filters them: by the
// selection of a bulk retry (job definition, activity, process definition,
// tenant, error text, opened before, instance prefix), open ones only
// unless Resolved, newest first unless Oldest.
//
// Deprecated: use [incident.ListParams] with [Engine.Incidents].
type IncidentSearch struct {
	bulk.Incidents
	Resolved bool
	Oldest   bool
}

// SearchIncidents returns one page of the incidents s selects, at most
// limit (1 to MaxPageSize), after incident id cursor (0: the first page;
// the next page's cursor is the last incident's ID).
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.List].
func (e *Engine) SearchIncidents(ctx context.Context, s *IncidentSearch, cursor int64, limit int) ([]*Incident, error) {
	if s == nil {
		s = &IncidentSearch{}
	}
	return incidentItems(e.Incidents().List(ctx, &incident.ListParams{Filter: incident.Filter{Incidents: s.Incidents, Resolved: s.Resolved},
		Oldest: s.Oldest, Limit: limit, After: listpage.ID(cursor)}))
}

// IncidentGroups groups the incidents s selects by the first line of their
// error, the largest group first (at most 100 groups).
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.Groups].
func (e *Engine) IncidentGroups(ctx context.Context, s *IncidentSearch) ([]*IncidentGroup, error) {
	if s == nil {
		s = &IncidentSearch{}
	}
	return e.Incidents().Groups(ctx, &incident.Filter{Incidents: s.Incidents, Resolved: s.Resolved})
}

// CountIncidents returns how many open incidents sel selects: what
// BulkRetryIncidents begun now would walk.
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.Count].
func (e *Engine) CountIncidents(ctx context.Context, sel *bulk.Incidents) (int64, error) {
	return e.Incidents().Count(ctx, sel)
}

// OpenIncidents returns the open incidents, oldest first (at most
// MaxIncidents).
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.List].
func (e *Engine) OpenIncidents(ctx context.Context) ([]*Incident, error) {
	return e.allIncidents(ctx, incident.ListParams{Oldest: true})
}

// OpenIncidentsPage returns the open incidents whose id is above afterID (0
// for the first page), oldest first, at most limit: the paged form of
// OpenIncidents.
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.List].
func (e *Engine) OpenIncidentsPage(ctx context.Context, afterID int64, limit int) ([]*Incident, error) {
	return incidentItems(e.Incidents().List(ctx, &incident.ListParams{Oldest: true, Limit: limit, After: listpage.ID(afterID)}))
}

// AllIncidents returns every incident, open or resolved, newest first (at
// most MaxIncidents).
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.List] with
// Resolved.
func (e *Engine) AllIncidents(ctx context.Context) ([]*Incident, error) {
	return e.allIncidents(ctx, incident.ListParams{Filter: incident.Filter{Resolved: true}})
}

// JobIncidents returns every incident of one job, open or resolved, oldest
// first (at most MaxIncidents). A job without incidents has none. A job id
// that names neither a job nor any incident (a deleted job keeps its resolved
// incidents) gives an error naming it that wraps ErrNotFound, as the other
// calls on one job do.
//
// Deprecated: use [Engine.Incidents] and [incident.Incidents.List] with
// JobID and Resolved.
func (e *Engine) JobIncidents(ctx context.Context, jobID int64) ([]*Incident, error) {
	incidents, err := e.allIncidents(ctx, incident.ListParams{Filter: incident.Filter{JobID: jobID, Resolved: true}, Oldest: true})
	return incidents, err
}

// allIncidents reads the pages of the incidents params selects, up to
// MaxIncidents: the old unpaged listings.
func (e *Engine) allIncidents(ctx context.Context, params incident.ListParams) ([]*Incident, error) {
	return allPages(MaxIncidents, func(after string) ([]*Incident, string, error) {
		params.After, params.Limit = after, listpage.MaxLimit
		res, err := e.Incidents().List(ctx, &params)
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	})
}

func incidentItems(res *incident.ListResult, err error) ([]*Incident, error) {
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// allPages gathers the pages page returns, from the first, until a page has
// no next one or max items are gathered: the old unpaged listings on top of
// a handle's List.
func allPages[T any](maxItems int, page func(after string) ([]T, string, error)) ([]T, error) {
	var all []T
	after := ""
	for {
		items, next, err := page(after)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" || len(all) >= maxItems {
			if len(all) > maxItems {
				all = all[:maxItems]
			}
			return all, nil
		}
		after = next
	}
}
