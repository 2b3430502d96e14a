package workflow

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/bulk"
)

var (
	incidentsSearchSQL = mustReadSQL("incidents_search.sql")
	incidentsGroupsSQL = mustReadSQL("incidents_groups.sql")
)

// IncidentSearch selects incidents as Camunda Cockpit filters them: by the
// selection of a bulk retry (job definition, activity, process definition,
// tenant, error text, opened before, instance prefix), open ones only
// unless Resolved, newest first unless Oldest.
type IncidentSearch struct {
	bulk.Incidents
	Resolved bool
	Oldest   bool
}

// IncidentGroup is the incidents of one error (its first line).
type IncidentGroup struct {
	Error       string
	Count       int64
	First, Last time.Time
}

// SearchIncidents returns one page of the incidents s selects, at most
// limit (1 to MaxPageSize), after incident id cursor (0: the first page;
// the next page's cursor is the last incident's ID).
func (e *Engine) SearchIncidents(ctx context.Context, s *IncidentSearch, cursor int64, limit int) ([]*Incident, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if s == nil {
		s = &IncidentSearch{}
	}
	direction, op := "DESC", "<"
	if s.Oldest {
		direction, op = "ASC", ">"
	}
	sql := strings.NewReplacer("/* FILTER */", "("+bulk.IncidentFilterSQL(4)+")", "/* DIRECTION */", direction, "/* CURSOR */", op).Replace(incidentsSearchSQL)
	return e.queryIncidents(ctx, "searching incidents", sql, append([]any{cursor, limit, s.Resolved}, s.IncidentArgs()...)...)
}

// IncidentGroups groups the incidents s selects by the first line of their
// error, the largest group first (at most 100 groups).
func (e *Engine) IncidentGroups(ctx context.Context, s *IncidentSearch) ([]*IncidentGroup, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	if s == nil {
		s = &IncidentSearch{}
	}
	sql := strings.ReplaceAll(incidentsGroupsSQL, "/* FILTER */", "("+bulk.IncidentFilterSQL(2)+")")
	rows, err := e.dbPool.Query(ctx, e.sql(sql), append([]any{s.Resolved}, s.IncidentArgs()...)...)
	if err != nil {
		return nil, fmt.Errorf("workflow: grouping incidents: %w", err)
	}
	defer rows.Close()
	var groups []*IncidentGroup
	for rows.Next() {
		g := &IncidentGroup{}
		if err := rows.Scan(&g.Error, &g.Count, &g.First, &g.Last); err != nil {
			return nil, fmt.Errorf("workflow: grouping incidents: %w", err)
		}
		g.First, g.Last = g.First.UTC(), g.Last.UTC()
		groups = append(groups, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workflow: grouping incidents: %w", err)
	}
	return groups, nil
}
