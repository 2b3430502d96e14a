// Package session lists the liveness sessions of a riverbpmn schema (see
// package liveness): which clients prove to the database that they are
// alive, and which died and when, until the leader has given their jobs
// back. List pages through them, the alive ones only on request.
package session

import (
	"context"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// Config configures a Sessions handle.
type Config struct {
	// DB is the database.
	DB liveness.Querier
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
}

// Sessions is the handle on a schema's liveness sessions.
type Sessions struct {
	db     liveness.Querier
	schema string
}

// New returns the handle on the sessions of config.Schema in config.DB.
func New(config Config) *Sessions { return &Sessions{db: config.DB, schema: config.Schema} }

// ListParams selects a page of sessions, oldest first (by id): the alive
// ones only with Alive, at most Limit (0: 100; at most 1000), after the
// cursor After ("" for the first page, then the Next of the previous page).
type ListParams struct {
	Alive bool   `json:"alive,omitempty"`
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
}

// ListResult is a page of sessions; Next is the cursor of the next page, ""
// when there is none.
type ListResult struct {
	Items []*liveness.Session `json:"items"`
	Next  string              `json:"next,omitempty"`
}

// List returns one page of the sessions params selects (nil: the oldest
// 100, alive or not), of the oldest liveness.MaxSessions. A bad Limit or
// After is an error naming the field and the value.
func (s *Sessions) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("session", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("session", params.After)
	if err != nil {
		return nil, err
	}
	all, err := liveness.Sessions(ctx, s.db, s.schema)
	if err != nil {
		return nil, err
	}
	var page []*liveness.Session
	for _, x := range all {
		if x.ID > after && (x.Alive || !params.Alive) {
			page = append(page, x)
		}
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(page, limit, func(x *liveness.Session) string { return listpage.ID(x.ID) })
	return res, nil
}
