package suspension

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/internal/roundloop"
)

// DefaultServiceInterval is the longest Service sleeps between two looks at
// the schedule: a change scheduled by another process is applied at most this
// late. Changes the service already knows of are applied when due.
const DefaultServiceInterval = time.Second

// Service applies scheduled changes (Schedule) when they are due. River runs
// it on its elected leader only (the engine's pilot returns it from
// PluginMaintenanceServices), so one client applies each change, and a new
// leader picks up whatever was due while there was none.
type Service struct {
	startstop.BaseStartStop

	db       DB
	schema   string
	clientID string
	interval time.Duration
	logger   *slog.Logger
}

// ServiceConfig configures a Service.
type ServiceConfig struct {
	// Schema of River's and riverbpmn's tables.
	Schema string
	// ClientID is recorded as the applier of each change.
	ClientID string
	// Interval is the longest sleep between two looks (DefaultServiceInterval
	// if zero).
	Interval time.Duration
	// Logger receives errors (slog.Default() if nil).
	Logger *slog.Logger
}

// NewService returns a service on db.
func NewService(db DB, config ServiceConfig) *Service {
	if config.Interval <= 0 {
		config.Interval = DefaultServiceInterval
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	return &Service{db: db, schema: config.Schema, clientID: config.ClientID, interval: config.Interval, logger: config.Logger}
}

// Start starts applying due changes until Stop (or ctx's end).
func (s *Service) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := s.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, s.round)
	return nil
}

// round applies what is due and says how long to sleep.
func (s *Service) round(ctx context.Context) time.Duration {
	_, next, err := ApplyDue(ctx, s.db, s.schema, s.clientID)
	if err != nil && ctx.Err() == nil {
		s.logger.ErrorContext(ctx, "riverbpmn suspension service: applying scheduled changes", slog.String("error", err.Error()))
	}
	wait := s.interval
	if !next.IsZero() {
		wait = min(wait, max(time.Until(next), time.Millisecond))
	}
	return wait
}
