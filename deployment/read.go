package deployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultListLimit is how many deployments List returns when
// ListParams.Limit is 0; MaxListLimit is the most it returns.
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// ListParams selects a page of deployments, newest first.
type ListParams struct {
	// After is the cursor of the previous page (ListResult.Cursor); empty for
	// the first page.
	After string
	// Limit is the page size: 0 means DefaultListLimit; at most MaxListLimit.
	Limit int
}

// ListResult is one page of deployments.
type ListResult struct {
	// Deployments are newest first, with their process definitions but
	// without job definitions (Get has them).
	Deployments []*Deployment `json:"deployments"`
	// Cursor is the next page's ListParams.After; empty after the last page.
	Cursor string `json:"cursor,omitempty"`
}

type rowScanner interface{ Scan(dest ...any) error }

func scanDeployment(row rowScanner) (*Deployment, error) {
	dep := &Deployment{}
	var (
		findings         []byte
		names, checksums []string
		sizes            []int32
	)
	if err := row.Scan(&dep.ID, &dep.Name, &dep.TenantID, &dep.Source, &dep.CreatedAt, &findings, &names, &checksums, &sizes); err != nil {
		return nil, err
	}
	dep.CreatedAt = dep.CreatedAt.UTC()
	if err := json.Unmarshal(findings, &dep.Findings); err != nil {
		return nil, fmt.Errorf("deployment %s: reading its findings: %w", dep.ID, err)
	}
	dep.Resources = make([]ResourceInfo, len(names))
	for i := range names {
		dep.Resources[i] = ResourceInfo{Name: names[i], Checksum: checksums[i], Bytes: int(sizes[i])}
	}
	return dep, nil
}

// List returns a page of deployments, newest first.
func (d *Deployments) List(ctx context.Context, params ListParams) (*ListResult, error) {
	limit := params.Limit
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return nil, fmt.Errorf("deployment: ListParams.Limit %d is out of range: use 1 to %d (0 for %d)", limit, MaxListLimit, DefaultListLimit)
	}
	rows, err := d.cfg.DB.Query(ctx, d.sql(listDeploymentsSQL), params.After, limit)
	if err != nil {
		return nil, fmt.Errorf("deployment: listing deployments: %w", err)
	}
	res := &ListResult{Deployments: []*Deployment{}}
	byID := map[string]*Deployment{}
	var ids []string
	for rows.Next() {
		dep, err := scanDeployment(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("deployment: listing deployments: %w", err)
		}
		res.Deployments = append(res.Deployments, dep)
		byID[dep.ID] = dep
		ids = append(ids, dep.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("deployment: listing deployments: %w", err)
	}
	if len(ids) == 0 {
		return res, nil
	}
	pds, err := d.processDefinitions(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, pd := range pds {
		dep := byID[pd.DeploymentID]
		dep.ProcessDefinitions = append(dep.ProcessDefinitions, pd)
	}
	if len(res.Deployments) == limit {
		res.Cursor = ids[len(ids)-1]
	}
	return res, nil
}

func (d *Deployments) processDefinitions(ctx context.Context, ids []string) ([]ProcessDefinition, error) {
	rows, err := d.cfg.DB.Query(ctx, d.sql(processDefinitionsSQL), ids)
	if err != nil {
		return nil, fmt.Errorf("deployment: reading process definitions: %w", err)
	}
	defer rows.Close()
	var out []ProcessDefinition
	for rows.Next() {
		var (
			pd    ProcessDefinition
			calls []byte
		)
		if err := rows.Scan(&pd.ID, &pd.Key, &pd.Version, &pd.Name, &pd.DeploymentID, &pd.Resource, &pd.TenantID, &pd.Priority, &calls); err != nil {
			return nil, fmt.Errorf("deployment: reading process definitions: %w", err)
		}
		if err := json.Unmarshal(calls, &pd.CallActivities); err != nil {
			return nil, fmt.Errorf("deployment: process definition %s: reading its call activities: %w", pd.ID, err)
		}
		out = append(out, pd)
	}
	return out, rows.Err()
}

// Get returns a deployment with its process definitions and their job
// definitions (each with its overriding priority and unfinished jobs). An
// unknown id gives an error naming it that wraps ErrNotFound.
func (d *Deployments) Get(ctx context.Context, id string) (*Deployment, error) {
	dep, err := scanDeployment(d.cfg.DB.QueryRow(ctx, d.sql(getDeploymentSQL), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("deployment: deployment %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("deployment: reading deployment %q: %w", id, err)
	}
	pds, err := d.processDefinitions(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	rows, err := d.cfg.DB.Query(ctx, d.sql(jobDefinitionsSQL), id)
	if err != nil {
		return nil, fmt.Errorf("deployment: reading the job definitions of deployment %q: %w", id, err)
	}
	defer rows.Close()
	byProcess := map[string][]JobDefinition{}
	for rows.Next() {
		var jd JobDefinition
		if err := rows.Scan(&jd.ID, &jd.ProcessDefinitionID, &jd.ActivityID, &jd.Alias, &jd.Type, &jd.Configuration, &jd.Exclusive,
			&jd.Priority, &jd.RetryCycle, &jd.TimerType, &jd.TimerValue, &jd.OverridingPriority, &jd.UnfinishedJobs); err != nil {
			return nil, fmt.Errorf("deployment: reading the job definitions of deployment %q: %w", id, err)
		}
		byProcess[jd.ProcessDefinitionID] = append(byProcess[jd.ProcessDefinitionID], jd)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range pds {
		pds[i].JobDefinitions = byProcess[pds[i].ID]
	}
	dep.ProcessDefinitions = pds
	return dep, nil
}

// DeleteParams says how to delete.
type DeleteParams struct {
	// Cascade deletes the deployment's unfinished jobs that are not running
	// with it. Without it, a deployment with unfinished jobs is not deleted.
	Cascade bool
}

// DeleteResult says what Delete did.
type DeleteResult struct {
	// Deployment is the deployment as it was.
	Deployment *Deployment `json:"deployment"`
	// DeletedJobs counts the jobs a cascade deleted.
	DeletedJobs int64 `json:"deleted_jobs"`
}

// Delete deletes a deployment with its process and job definitions, in one
// transaction. It refuses, with an error wrapping ErrUnfinishedJobs that
// counts them by state, while the deployment has unfinished jobs, unless
// params.Cascade (which deletes them, except running ones: a running job
// always refuses the delete). An unknown id wraps ErrNotFound.
func (d *Deployments) Delete(ctx context.Context, id string, params DeleteParams) (*DeleteResult, error) {
	dep, err := d.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &DeleteResult{Deployment: dep}
	err = pgx.BeginFunc(ctx, d.cfg.DB, func(tx pgx.Tx) error {
		var locked string
		if err := tx.QueryRow(ctx, d.sql(lockDeploymentSQL), id).Scan(&locked); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("deployment %q: %w", id, ErrNotFound)
			}
			return err
		}
		rows, err := tx.Query(ctx, d.sql(unfinishedJobsSQL), id)
		if err != nil {
			return err
		}
		var (
			counts  []string
			total   int64
			running int64
		)
		for rows.Next() {
			var (
				state string
				n     int64
			)
			if err := rows.Scan(&state, &n); err != nil {
				rows.Close()
				return err
			}
			counts = append(counts, fmt.Sprintf("%d %s", n, state))
			total += n
			if state == "running" {
				running = n
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		switch {
		case total > 0 && !params.Cascade:
			return fmt.Errorf("%w: %s; delete it with cascade to delete them too, or wait for them to finish", ErrUnfinishedJobs, strings.Join(counts, ", "))
		case running > 0:
			return fmt.Errorf("%w: %s; a cascade deletes no running job: wait for the running ones to finish", ErrUnfinishedJobs, strings.Join(counts, ", "))
		}
		if total > 0 {
			tag, err := tx.Exec(ctx, d.sql(deleteJobsSQL), id)
			if err != nil {
				return err
			}
			res.DeletedJobs = tag.RowsAffected()
		}
		_, err = tx.Exec(ctx, d.sql(deleteDeploymentSQL), id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("deployment: deleting deployment %q: %w", id, err)
	}
	for _, pd := range dep.ProcessDefinitions {
		for _, jd := range pd.JobDefinitions {
			d.resolved.Delete(jd.ID)
			d.aliases.Delete(jd.Alias)
		}
	}
	return res, nil
}

// Resolved is a deployed job definition with its process definition, as the
// insert path needs it.
type Resolved struct {
	Job     JobDefinition
	Process ProcessDefinition
}

// AliasCacheTTL is how long Resolve answers an alias from its cache: a new
// version deployed by another process is answered by that alias at most
// this long after its deployment committed.
const AliasCacheTTL = time.Second

type aliasEntry struct {
	resolved *Resolved
	at       time.Time
}

// Resolve returns the deployed job definition named by id (its id, or its
// alias for the newest version), or nil when no deployed job definition has
// that id or alias. A definition named by id is read once (a version's
// definitions never change); one named by alias is read again after
// AliasCacheTTL. The read runs on the handle's database (the engine's
// pool), not in the inserting transaction.
func (d *Deployments) Resolve(ctx context.Context, id string) (*Resolved, error) {
	if r, ok := d.resolved.Load(id); ok {
		return r.(*Resolved), nil
	}
	if e, ok := d.aliases.Load(id); ok && time.Since(e.(aliasEntry).at) < AliasCacheTTL {
		return e.(aliasEntry).resolved, nil
	}
	r := &Resolved{}
	jd, pd := &r.Job, &r.Process
	err := d.cfg.DB.QueryRow(ctx, d.sql(resolveJobDefinitionSQL), id).Scan(
		&jd.ID, &jd.ProcessDefinitionID, &jd.ActivityID, &jd.Alias, &jd.Type, &jd.Configuration, &jd.Exclusive,
		&jd.Priority, &jd.RetryCycle, &jd.TimerType, &jd.TimerValue,
		&pd.Key, &pd.Version, &pd.Name, &pd.DeploymentID, &pd.Resource, &pd.TenantID, &pd.Priority)
	var pgErr *pgconn.PgError
	if errors.Is(err, pgx.ErrNoRows) || errors.As(err, &pgErr) && pgErr.Code == "42P01" {
		// None, or a schema without deployments (before migration
		// riverbpmn/024): nothing is deployed there.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deployment: resolving job definition %q: %w", id, err)
	}
	pd.ID = jd.ProcessDefinitionID
	if jd.ID == id {
		d.resolved.Store(id, r)
	} else {
		d.aliases.Store(id, aliasEntry{resolved: r, at: time.Now()})
	}
	return r, nil
}

// DeployedAmong returns which of ids are job definitions of a deployment,
// each with its deployment's id. A schema before migration riverbpmn/024
// has none.
func (d *Deployments) DeployedAmong(ctx context.Context, ids []string) (map[string]string, error) {
	var deployed [][2]string
	rows, err := d.cfg.DB.Query(ctx, d.sql(deployedAmongSQL), ids)
	if err == nil {
		deployed, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) ([2]string, error) {
			var pair [2]string
			err := row.Scan(&pair[0], &pair[1])
			return pair, err
		})
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "42703") {
		// A schema before migration riverbpmn/024 (or before any of ours:
		// the caller's own statement then says so).
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deployment: looking up deployed job definitions: %w", err)
	}
	out := make(map[string]string, len(deployed))
	for _, pair := range deployed {
		out[pair[0]] = pair[1]
	}
	return out, nil
}
