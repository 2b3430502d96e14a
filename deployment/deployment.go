// Package deployment deploys BPMN models: it reads them with package bpmn and
// records, in one transaction, a deployment (id, name, tenant, time, its
// resources and their checksums), a new version of each process definition
// the models hold, and their job definitions, as Camunda 7 does.
//
// # Versions
//
// A process key deployed again becomes a new version ("<key>:<version>")
// with job definitions of its own, "<key>:<version>:<activity>:<slot>"
// where the slot is "async-before", "async-after" or "timer". A job keeps
// the job definition it was inserted with, so jobs of an older version keep
// their priority, retry cycle and exclusive flag. Unlike Camunda, a version
// is never given twice, even after its deployment is deleted, so that a job
// definition id always means one definition; and a key has one sequence of
// versions whatever the deployments' tenants (Camunda keeps one per
// tenant). A job may name its job
// definition by its alias, "<key>:<activity>:<slot>": the newest version's
// then answers.
//
// # Duplicates
//
// A deployment whose resources (names and SHA-256 checksums) are those of
// the newest deployment of the same name and tenant creates nothing: Create
// returns that deployment, marked Duplicate (Camunda's duplicate filter,
// always on here, since a model that is never executed gains nothing from a
// second identical version).
//
// # Deletion
//
// Delete refuses a deployment that has unfinished jobs (available,
// scheduled, retryable, pending or running), naming how many of each;
// with Cascade it deletes those that are not running first. A running job
// is never deleted from under its worker: with running jobs, Delete fails
// even with Cascade, and succeeds once they have finished.
package deployment

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	lockSQL                    = mustSQL("lock.sql")
	latestByNameSQL            = mustSQL("latest_by_name.sql")
	insertDeploymentSQL        = mustSQL("insert_deployment.sql")
	nextVersionSQL             = mustSQL("next_version.sql")
	insertProcessDefinitionSQL = mustSQL("insert_process_definition.sql")
	insertJobDefinitionsSQL    = mustSQL("insert_job_definitions.sql")
	getDeploymentSQL           = mustSQL("get_deployment.sql")
	listDeploymentsSQL         = mustSQL("list_deployments.sql")
	processDefinitionsSQL      = mustSQL("process_definitions.sql")
	jobDefinitionsSQL          = mustSQL("job_definitions.sql")
	resolveJobDefinitionSQL    = mustSQL("resolve_job_definition.sql")
	unfinishedJobsSQL          = mustSQL("unfinished_jobs.sql")
	deleteJobsSQL              = mustSQL("delete_jobs.sql")
	deleteDeploymentSQL        = mustSQL("delete_deployment.sql")
	lockDeploymentSQL          = mustSQL("lock_deployment.sql")
	deployedAmongSQL           = mustSQL("deployed_among.sql")
)

// AdvisoryLockClass is the first key of the advisory lock that serialises
// deployments of one schema.
const AdvisoryLockClass = 1380076900

// MaxIDBytes is the longest job definition id a deployment stores (the
// limit of river_bpmn_job_definition.id and of a job context's fields).
const MaxIDBytes = 255

// ErrNotFound is wrapped by the errors for a deployment id that names
// nothing. It is the same error as every other package's ErrNotFound
// (workflow.ErrNotFound too).
var ErrNotFound = notfound.Err

// ErrUnfinishedJobs is wrapped by Delete's error for a deployment that still
// has unfinished jobs.
var ErrUnfinishedJobs = errors.New("deployment has unfinished jobs")

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx (where Begin makes a savepoint).
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Config configures a Deployments handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// Expressions are the functions that expressions in models bind to.
	Expressions bpmn.Expressions
	// Check, if set, is asked about every model before anything is written;
	// its error aborts the deployment. The engine checks there that a model
	// does not define differently what is declared in Go.
	Check func(m *bpmn.Model) error
	// Created, if set, is called with each deployment Create made (not with
	// a duplicate), after it is committed.
	Created func(id string)
}

// Deployments is the handle on deployed BPMN models: create, list, show and
// delete deployments, and resolve the job definition of a job about to be
// inserted.
type Deployments struct {
	cfg Config
	// resolved caches deployed job definitions by id: a version's
	// definitions never change, so an entry is good until its deployment is
	// deleted through this handle.
	resolved sync.Map // id -> *Resolved
	// aliases caches alias resolutions for AliasCacheTTL.
	aliases sync.Map // alias -> aliasEntry
}

// New returns a handle.
func New(cfg Config) *Deployments { return &Deployments{cfg: cfg} }

func (d *Deployments) sql(tmpl string) string { return sqltemplate.Render(tmpl, d.cfg.Schema) }

// Resource is one BPMN file to deploy.
type Resource struct {
	// Name is the resource's name, such as "invoice.bpmn"; errors name it.
	Name    string
	Content []byte
}

// CreateParams says what to deploy.
type CreateParams struct {
	// Name is the deployment's name; the duplicate filter compares with the
	// newest deployment of this name and tenant.
	Name string
	// TenantID is the deployment's tenant: its jobs belong to it.
	TenantID string
	// Source says where the deployment came from, such as "cli".
	Source string
	// Resources are the models (at least one).
	Resources []Resource
	// UnboundExpressions accepts expressions the handle's Expressions have
	// no function for (bpmn.Expressions.Unbound): the engines inserting the
	// jobs bind them.
	UnboundExpressions bool
}

// ResourceInfo is a deployed resource.
type ResourceInfo struct {
	Name string `json:"name"`
	// Checksum is the SHA-256 of its content, hex.
	Checksum string `json:"checksum"`
	Bytes    int    `json:"bytes"`
}

// Deployment is a deployment as stored.
type Deployment struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	TenantID  string         `json:"tenant_id,omitempty"`
	Source    string         `json:"source,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	Resources []ResourceInfo `json:"resources"`
	// ProcessDefinitions are the versions the deployment made.
	ProcessDefinitions []ProcessDefinition `json:"process_definitions"`
	// Findings are what the reader reported rather than read.
	Findings Findings `json:"findings"`
	// Duplicate is set on Create's result when nothing was deployed because
	// the resources are those of this (existing) deployment.
	Duplicate bool `json:"duplicate,omitempty"`
}

// Findings are the reader's reports of a deployment's models.
type Findings struct {
	Unsupported []bpmn.Finding `json:"unsupported,omitempty"`
	Ignored     []bpmn.Finding `json:"ignored,omitempty"`
}

// ProcessDefinition is one version of a process definition.
type ProcessDefinition struct {
	// ID is "<key>:<version>".
	ID           string `json:"id"`
	Key          string `json:"key"`
	Version      int    `json:"version"`
	Name         string `json:"name,omitempty"`
	DeploymentID string `json:"deployment_id"`
	Resource     string `json:"resource"`
	TenantID     string `json:"tenant_id,omitempty"`
	// Priority is the process's camunda:jobPriority as written.
	Priority       string              `json:"priority,omitempty"`
	CallActivities []bpmn.CallActivity `json:"call_activities,omitempty"`
	// JobDefinitions are filled by Get, not by List.
	JobDefinitions []JobDefinition `json:"job_definitions,omitempty"`
}

// JobDefinition is a deployed job definition.
type JobDefinition struct {
	// ID is "<key>:<version>:<activity>:<slot>".
	ID string `json:"id"`
	// Alias is "<key>:<activity>:<slot>": the newest version's answers it.
	Alias               string `json:"alias"`
	ProcessDefinitionID string `json:"process_definition_id"`
	ActivityID          string `json:"activity_id"`
	// Type and Configuration are Camunda's (see package bpmn).
	Type          string `json:"type"`
	Configuration string `json:"configuration"`
	Exclusive     bool   `json:"exclusive"`
	// Priority and RetryCycle are as written in the model.
	Priority   string `json:"priority,omitempty"`
	RetryCycle string `json:"retry_cycle,omitempty"`
	TimerType  string `json:"timer_type,omitempty"`
	TimerValue string `json:"timer_value,omitempty"`
	// OverridingPriority is the run-time override, if one is set (Get only).
	OverridingPriority *int64 `json:"overriding_priority,omitempty"`
	// UnfinishedJobs counts the definition's unfinished jobs (Get only).
	UnfinishedJobs int64 `json:"unfinished_jobs"`
}

// newID returns a deployment id that sorts by creation: 14 hex digits of
// Unix microseconds (deployments are made one at a time, under the
// deployment lock), then 6 random hex digits.
func newID(now time.Time) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%014x%s", now.UnixMicro(), hex.EncodeToString(b[:])), nil
}

// Create reads the resources and deploys them in one transaction: nothing
// is written when any model is invalid (an *bpmn.Error names the resource,
// element, attribute and value). A duplicate deploys nothing and returns the
// existing deployment with Duplicate set.
func (d *Deployments) Create(ctx context.Context, params CreateParams) (*Deployment, error) {
	if len(params.Resources) == 0 {
		return nil, errors.New("deployment: no resources to deploy")
	}
	models := make([]*bpmn.Model, 0, len(params.Resources))
	seenResource := map[string]bool{}
	seenKey := map[string]string{}
	var findings Findings
	names := make([]string, len(params.Resources))
	checksums := make([]string, len(params.Resources))
	contents := make([][]byte, len(params.Resources))
	for i, r := range params.Resources {
		if r.Name == "" {
			return nil, fmt.Errorf("deployment: resource %d has no name", i)
		}
		if seenResource[r.Name] {
			return nil, fmt.Errorf("deployment: resource %q is given twice", r.Name)
		}
		seenResource[r.Name] = true
		exprs := d.cfg.Expressions
		exprs.Unbound = exprs.Unbound || params.UnboundExpressions
		m, err := bpmn.Read(r.Name, r.Content, exprs)
		if err != nil {
			return nil, err
		}
		for _, p := range m.Processes {
			if other, dup := seenKey[p.Key]; dup {
				return nil, &bpmn.Error{Resource: r.Name, ElementID: p.Key, Attribute: "id", Value: p.Key,
					Problem: fmt.Sprintf("duplicate process key: resource %q of this deployment defines it too", other)}
			}
			seenKey[p.Key] = r.Name
			for _, jd := range p.JobDefinitions {
				// The longest id this job definition can get: a version of
				// ten digits.
				id := p.Key + ":" + "0000000000" + ":" + jd.ActivityID + ":" + jd.Slot()
				if len(id) > MaxIDBytes {
					return nil, &bpmn.Error{Resource: r.Name, ElementID: jd.ActivityID, Attribute: "id", Value: jd.ActivityID,
						Problem: fmt.Sprintf("the job definition id %q would be longer than %d bytes", id, MaxIDBytes)}
				}
			}
		}
		if d.cfg.Check != nil {
			if err := d.cfg.Check(m); err != nil {
				return nil, err
			}
		}
		models = append(models, m)
		findings.Unsupported = append(findings.Unsupported, m.Unsupported...)
		findings.Ignored = append(findings.Ignored, m.Ignored...)
		sum := sha256.Sum256(r.Content)
		names[i], checksums[i], contents[i] = r.Name, hex.EncodeToString(sum[:]), r.Content
	}

	var (
		dep       *Deployment
		duplicate string
	)
	err := pgx.BeginFunc(ctx, d.cfg.DB, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, d.sql(lockSQL), AdvisoryLockClass); err != nil {
			return err
		}
		var (
			lastID                  string
			lastNames, lastChecksum []string
		)
		err := tx.QueryRow(ctx, d.sql(latestByNameSQL), params.Name, params.TenantID).Scan(&lastID, &lastNames, &lastChecksum)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case sameResources(lastNames, lastChecksum, names, checksums):
			duplicate = lastID
			return nil
		}

		now := time.Now()
		id, err := newID(now)
		if err != nil {
			return err
		}
		findingsJSON, err := json.Marshal(findings)
		if err != nil {
			return err
		}
		dep = &Deployment{ID: id, Name: params.Name, TenantID: params.TenantID, Source: params.Source, Findings: findings}
		if err := tx.QueryRow(ctx, d.sql(insertDeploymentSQL), id, params.Name, params.TenantID, params.Source, findingsJSON,
			names, checksums, contents).Scan(&dep.CreatedAt); err != nil {
			return err
		}
		for i, m := range models {
			dep.Resources = append(dep.Resources, ResourceInfo{Name: names[i], Checksum: checksums[i], Bytes: len(contents[i])})
			for _, p := range m.Processes {
				pd, err := d.insertProcess(ctx, tx, dep, m.Resource, p)
				if err != nil {
					return err
				}
				dep.ProcessDefinitions = append(dep.ProcessDefinitions, *pd)
			}
		}
		return nil
	})
	if err != nil {
		var be *bpmn.Error
		if errors.As(err, &be) {
			return nil, err
		}
		return nil, fmt.Errorf("deployment: deploying %s: %w", strings.Join(names, ", "), err)
	}
	if duplicate != "" {
		existing, err := d.Get(ctx, duplicate)
		if err != nil {
			return nil, err
		}
		existing.Duplicate = true
		return existing, nil
	}
	for _, pd := range dep.ProcessDefinitions {
		for _, jd := range pd.JobDefinitions {
			d.aliases.Delete(jd.Alias) // the new version answers at once here
		}
	}
	if d.cfg.Created != nil {
		d.cfg.Created(dep.ID)
	}
	return dep, nil
}

func sameResources(lastNames, lastChecksums, names, checksums []string) bool {
	if len(lastNames) != len(names) {
		return false
	}
	have := make(map[string]string, len(lastNames))
	for i, n := range lastNames {
		have[n] = lastChecksums[i]
	}
	for i, n := range names {
		if c, ok := have[n]; !ok || c != checksums[i] {
			return false
		}
	}
	return true
}

// insertProcess stores one process definition as the next version of its
// key, with its job definitions.
func (d *Deployments) insertProcess(ctx context.Context, tx pgx.Tx, dep *Deployment, resource string, p bpmn.Process) (*ProcessDefinition, error) {
	var version int
	if err := tx.QueryRow(ctx, d.sql(nextVersionSQL), p.Key).Scan(&version); err != nil {
		return nil, err
	}
	pd := &ProcessDefinition{
		ID: fmt.Sprintf("%s:%d", p.Key, version), Key: p.Key, Version: version, Name: p.Name,
		DeploymentID: dep.ID, Resource: resource, TenantID: dep.TenantID, Priority: p.Priority,
		CallActivities: p.CallActivities,
	}
	calls, err := json.Marshal(nonNil(p.CallActivities))
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, d.sql(insertProcessDefinitionSQL), pd.ID, pd.Key, pd.Version, pd.Name, dep.ID, resource,
		dep.TenantID, pd.Priority, calls); err != nil {
		return nil, err
	}
	n := len(p.JobDefinitions)
	if n == 0 {
		return pd, nil
	}
	var (
		ids, activities, aliases, types, configs, prios, cycles, timerTypes, timerValues = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		exclusives                                                                       = make([]bool, n)
	)
	for i, jd := range p.JobDefinitions {
		slot := jd.Slot()
		def := JobDefinition{
			ID: fmt.Sprintf("%s:%s:%s", pd.ID, jd.ActivityID, slot), Alias: fmt.Sprintf("%s:%s:%s", p.Key, jd.ActivityID, slot),
			ProcessDefinitionID: pd.ID, ActivityID: jd.ActivityID, Type: jd.Type, Configuration: jd.Configuration,
			Exclusive: jd.Exclusive, Priority: jd.Priority, RetryCycle: jd.RetryCycle,
		}
		if jd.Timer != nil {
			def.TimerType, def.TimerValue = string(jd.Timer.Type), jd.Timer.Value
		}
		if slices.Contains(ids[:i], def.ID) {
			return nil, &bpmn.Error{Resource: resource, ElementID: jd.ActivityID, Attribute: "id", Value: jd.ActivityID,
				Problem: fmt.Sprintf("two job definitions of the process would have id %q", def.ID)}
		}
		ids[i], activities[i], aliases[i], types[i], configs[i] = def.ID, def.ActivityID, def.Alias, def.Type, def.Configuration
		exclusives[i], prios[i], cycles[i], timerTypes[i], timerValues[i] = def.Exclusive, def.Priority, def.RetryCycle, def.TimerType, def.TimerValue
		pd.JobDefinitions = append(pd.JobDefinitions, def)
	}
	if _, err := tx.Exec(ctx, d.sql(insertJobDefinitionsSQL), p.Key, dep.ID, pd.ID, version,
		ids, activities, aliases, types, configs, exclusives, prios, cycles, timerTypes, timerValues); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return nil, &bpmn.Error{Resource: resource, ElementID: p.Key, Attribute: "id", Value: p.Key,
				Problem: "a job definition of this process has an id that is already stored (declared in Go): " + pgErr.Detail}
		}
		return nil, err
	}
	return pd, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
