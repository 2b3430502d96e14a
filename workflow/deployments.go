package workflow

import (
	"errors"
	"fmt"
	"slices"
)

// errNotDeploymentAware is returned when deployments are registered on a
// driver whose acquisition is not deployment aware.
var errNotDeploymentAware = errors.New("workflow: this driver's acquisition is not deployment aware (Acquisition.DeploymentAware)")

// RegisterDeployment makes the driver's clients fetch jobs of deployment id
// from their next fetch on. Registering twice is harmless.
func (d *Driver) RegisterDeployment(id string) error {
	if !d.acquisition.DeploymentAware {
		return errNotDeploymentAware
	}
	if problem := identifierProblem(id, true); problem != "" {
		return fmt.Errorf("workflow: deployment id %s %s", quoteForError(id), problem)
	}
	d.deployments.add(id)
	return nil
}

// UnregisterDeployment stops the driver's clients fetching jobs of deployment
// id from their next fetch on (jobs already fetched keep running). It
// reports whether id was registered. Like RegisterDeployment, it is an error
// on a driver whose acquisition is not deployment aware.
func (d *Driver) UnregisterDeployment(id string) (bool, error) {
	if !d.acquisition.DeploymentAware {
		return false, errNotDeploymentAware
	}
	return d.deployments.remove(id), nil
}

// RegisteredDeployments returns the deployments the driver's clients fetch
// jobs of, sorted.
func (d *Driver) RegisteredDeployments() []string {
	return slices.Clone(d.deployments.snapshot())
}
