package lifecycle

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/internal/roundloop"
)

// DefaultServiceInterval is the longest the lifecycle service sleeps
// between two looks: a job is discarded at most this long (plus one
// statement) after it expired, and an unlinked dependency is linked at most
// this long after it was inserted.
const DefaultServiceInterval = time.Second

// Service discards expired jobs (ExpireDue) and links dependencies whose
// prerequisite was locked when they were inserted (Link). River runs it on
// its elected leader only (the engine's pilot returns it from
// PluginMaintenanceServices), so it is one client's work, and a new leader
// picks up whatever was due while there was none.
type Service struct {
	startstop.BaseStartStop

	db       hold.DB
	schema   string
	interval time.Duration
	logger   *slog.Logger

	// OnExpired, when set, is called with the number of jobs each round
	// discarded because they expired (metrics).
	OnExpired func(ctx context.Context, n int64)
}

// NewService returns a lifecycle service on db; interval <= 0 means
// DefaultServiceInterval, a nil logger slog.Default().
func NewService(db hold.DB, schema string, interval time.Duration, logger *slog.Logger) *Service {
	if interval <= 0 {
		interval = DefaultServiceInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Service{db: db, schema: schema, interval: interval, logger: logger}
}

// Start starts the service's rounds until Stop (or ctx's end).
func (s *Service) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := s.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, s.round)
	return nil
}

func (s *Service) round(ctx context.Context) time.Duration {
	expired, next, err := ExpireDue(ctx, s.db, s.schema)
	if s.OnExpired != nil && len(expired) > 0 {
		s.OnExpired(ctx, int64(len(expired)))
	}
	if err != nil && ctx.Err() == nil {
		s.logger.ErrorContext(ctx, "riverbpmn lifecycle service: expiring jobs", slog.String("error", err.Error()))
	}
	if _, err := Link(ctx, s.db, s.schema); err != nil && ctx.Err() == nil {
		s.logger.ErrorContext(ctx, "riverbpmn lifecycle service: linking dependencies", slog.String("error", err.Error()))
	}
	wait := s.interval
	if !next.IsZero() {
		wait = min(wait, max(time.Until(next), 10*time.Millisecond))
	}
	return wait
}
