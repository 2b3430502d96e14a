package liveness

import (
	"embed"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	sessionOpenSQL     = sqltemplate.MustRead(sqlFS, "sql/session_open.sql")
	sessionObserveSQL  = sqltemplate.MustRead(sqlFS, "sql/session_observe.sql")
	sessionCloseSQL    = sqltemplate.MustRead(sqlFS, "sql/session_close.sql")
	sessionEvictSQL    = sqltemplate.MustRead(sqlFS, "sql/session_evict.sql")
	sessionsDueSQL     = sqltemplate.MustRead(sqlFS, "sql/sessions_due.sql")
	sessionTakeoverSQL = sqltemplate.MustRead(sqlFS, "sql/session_takeover.sql")
	sessionHeldSQL     = sqltemplate.MustRead(sqlFS, "sql/session_held.sql")
	jobsOfDeadSQL      = sqltemplate.MustRead(sqlFS, "sql/jobs_of_dead_sessions.sql")
)
