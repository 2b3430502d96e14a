package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/deployment"
)

// deploymentsVerb is the flag set of one deployments verb.
func deploymentsVerb(sub string) (*verb, *deploymentsFlags) {
	v := newVerb("deployments " + sub)
	f := &deploymentsFlags{}
	if sub == "create" {
		v.fs.StringVar(&f.name, "name", "", "the deployment's name (default: the first FILE's base name); the duplicate filter compares with the newest deployment of this name and tenant")
		v.fs.StringVar(&f.tenant, "tenant", "", "the deployment's tenant")
		v.fs.BoolVar(&f.unbound, "unbound-expressions", false, "accept ${...} priorities and retry cycles: the CLI has none of the application's functions; the engine inserting a job binds them (Config.Expressions)")
	}
	if sub == "delete" {
		v.fs.BoolVar(&f.cascade, "cascade", false, "also delete the deployment's unfinished jobs (not running ones)")
	}
	return v, f
}

type deploymentsFlags struct {
	name, tenant     string
	cascade, unbound bool
}

func runDeploymentsCreate(ctx context.Context, args []string, stdout io.Writer) error {
	v, f := deploymentsVerb("create")
	files, err := splitVerbArgs(v.fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("missing FILE (usage: deployments create FILE... [--name N] [--tenant T])")
	}
	params := deployment.CreateParams{Name: f.name, TenantID: f.tenant, Source: "cli", UnboundExpressions: f.unbound}
	for _, file := range files {
		content, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		params.Resources = append(params.Resources, deployment.Resource{Name: filepath.Base(file), Content: content})
	}
	if params.Name == "" {
		params.Name = filepath.Base(files[0])
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	dep, err := engine.Deployments().Create(ctx, params)
	if err != nil {
		return err
	}
	return v.print(stdout, dep, func(w io.Writer) error {
		if dep.Duplicate {
			fmt.Fprintf(w, "nothing deployed: the resources are those of deployment %s (%s)\n", dep.ID, dep.Name)
		} else {
			fmt.Fprintf(w, "deployed %s (%s)\n", dep.ID, dep.Name)
		}
		return printDeployment(w, dep)
	})
}

func runDeploymentsShow(ctx context.Context, args []string, stdout io.Writer) error {
	v, _ := deploymentsVerb("show")
	handle, id, closeDB, err := openDeployment(ctx, v, args)
	if err != nil {
		return err
	}
	defer closeDB()
	dep, err := handle.Get(ctx, id)
	if err != nil {
		return err
	}
	return v.print(stdout, dep, func(w io.Writer) error { return printDeployment(w, dep) })
}

// openDeployment parses a verb on one deployment (DEPLOYMENT_ID) and opens
// the deployments handle on the schema of its flags.
func openDeployment(ctx context.Context, v *verb, args []string) (handle *deployment.Deployments, id string, closeDB func(), err error) {
	pos, err := v.parse(args, "DEPLOYMENT_ID")
	if err != nil {
		return nil, "", nil, err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return nil, "", nil, err
	}
	return engine.Deployments(), pos[0], closeDB, nil
}

func runDeploymentsDelete(ctx context.Context, args []string, stdout io.Writer) error {
	v, f := deploymentsVerb("delete")
	handle, id, closeDB, err := openDeployment(ctx, v, args)
	if err != nil {
		return err
	}
	defer closeDB()
	res, err := handle.Delete(ctx, id, deployment.DeleteParams{Cascade: f.cascade})
	if err != nil {
		return err
	}
	return v.print(stdout, res, func(w io.Writer) error {
		var pds []string
		for _, pd := range res.Deployment.ProcessDefinitions {
			pds = append(pds, fmt.Sprintf("%s (%d job definitions)", pd.ID, len(pd.JobDefinitions)))
		}
		fmt.Fprintf(w, "deleted deployment %s (%s): %s; %d unfinished jobs deleted\n", res.Deployment.ID, orDash(res.Deployment.Name),
			strings.Join(pds, ", "), res.DeletedJobs)
		return nil
	})
}

// printDeployment writes a deployment with its versions, job definitions
// and the reader's findings.
func printDeployment(w io.Writer, dep *deployment.Deployment) error {
	fmt.Fprintf(w, "deployment %s  name %s  tenant %s  created %s  source %s\n", dep.ID, orDash(dep.Name), orDash(dep.TenantID),
		dep.CreatedAt.Format(time.RFC3339), orDash(dep.Source))
	for _, r := range dep.Resources {
		fmt.Fprintf(w, "  resource %s  %d bytes  sha256 %s\n", r.Name, r.Bytes, r.Checksum)
	}
	for _, pd := range dep.ProcessDefinitions {
		fmt.Fprintf(w, "process definition %s  key %s  version %d  name %s  priority %s  resource %s\n", pd.ID, pd.Key, pd.Version, orDash(pd.Name), orDash(pd.Priority), pd.Resource)
		for _, c := range pd.CallActivities {
			fmt.Fprintf(w, "  call activity %s calls %s\n", c.ActivityID, orDash(c.CalledElement))
		}
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		if len(pd.JobDefinitions) > 0 {
			fmt.Fprintln(tw, "  JOB DEFINITION\tTYPE\tCONFIGURATION\tEXCLUSIVE\tPRIORITY\tRETRY CYCLE\tUNFINISHED")
		}
		for _, jd := range pd.JobDefinitions {
			prio := orDash(jd.Priority)
			if jd.OverridingPriority != nil {
				prio = fmt.Sprintf("%d (override)", *jd.OverridingPriority)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%t\t%s\t%s\t%d\n", jd.ID, jd.Type, jd.Configuration, jd.Exclusive, prio, orDash(jd.RetryCycle), jd.UnfinishedJobs)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, f := range dep.Findings.Unsupported {
		fmt.Fprintf(w, "unsupported: %s\n", f)
	}
	if n := len(dep.Findings.Ignored); n > 0 {
		fmt.Fprintf(w, "%d engine extensions ignored (not job executor configuration; --json lists them)\n", n)
	}
	return nil
}
