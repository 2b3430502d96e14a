package workflow

// Telemetry (Config.Telemetry): how the engine feeds package telemetry's
// instruments. The instruments read each job's identity from its job
// context themselves (telemetry.ContextReader, under the engine's exclusive
// scope); the engine names each driver's acquisition order, and its hooks
// into the fetch, the work middleware, the retry bookkeeping, liveness,
// expiry and incidents are single calls into telemetry.Instruments.

import (
	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/telemetry"
)

// acquisitionOrder names a driver's acquisition order for the instruments
// (riverbpmn.acquisition.order).
func acquisitionOrder(acq *Acquisition) string {
	var parts []string
	if acq.TimersFirst {
		parts = append(parts, telemetry.OrderTimersFirst)
	}
	if acq.ByDueDate {
		parts = append(parts, telemetry.OrderDueDate)
	}
	if acq.ByPriority {
		parts = append(parts, telemetry.OrderPriority)
	}
	if acq.FairByTenant {
		parts = append(parts, telemetry.OrderFair)
	}
	return telemetry.Order(parts...)
}

// telemetry returns the instruments of the driver's engine; nil (recording
// nothing) for a driver without one.
func (d *Driver) telemetry() *telemetry.Instruments {
	if d.engine == nil {
		return nil
	}
	return d.engine.tel
}

// telemetryServices returns the service that makes the elected leader report
// the database figures (PluginMaintenanceServices).
func (e *Engine) telemetryServices() []startstop.Service {
	if leader := e.tel.Leader(e.config.Schema); leader != nil {
		return []startstop.Service{leader}
	}
	return nil
}
