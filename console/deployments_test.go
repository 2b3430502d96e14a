package console_test

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type deployedArgs struct{}

func (deployedArgs) Kind() string { return "console_deployed" }

func TestDeploymentsPage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	_, body := b.get("/deployments")
	require.Contains(t, body, "No deployments.")

	content, err := os.ReadFile("../bpmn/testdata/camunda/jobPrioProcess.bpmn20.xml")
	require.NoError(t, err)
	model := deployment.Resource{Name: "jobPrioProcess.bpmn20.xml", Content: content}
	v1, err := e.engine.Deployments().Create(e.ctx, deployment.CreateParams{Name: "prio", Resources: []deployment.Resource{model}})
	require.NoError(t, err)
	// A second version of the key, from a changed model.
	model.Content = []byte(string(content[:len(content)-len("</definitions>\n")]) + "<!-- changed --></definitions>\n")
	v2, err := e.engine.Deployments().Create(e.ctx, deployment.CreateParams{Name: "prio", Resources: []deployment.Resource{model}})
	require.NoError(t, err)
	_, err = e.client.Insert(e.ctx, deployedArgs{}, workflow.JobContext{JobDefinitionID: "jobPrioProcess:task2:async-before", ProcessInstanceID: "pi-d"}.InsertOpts())
	require.NoError(t, err)

	status, body := b.get("/deployments")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `class="current">Deployments</a>`)
	for _, want := range []string{v1.ID, v2.ID, "jobPrioProcess:1:task1:async-before", "jobPrioProcess:2:task2:async-after", "async-continuation", "process priority 10"} {
		require.Contains(t, body, want)
	}
	require.Regexp(t, `(?s)jobPrioProcess:2:task2:async-before</a></td>\s*<td>async-continuation</td><td>async-before</td><td>true</td>\s*<td>5</td>\s*<td>-</td><td class="num">1</td>`, body)
	require.Less(t, strings.Index(body, v2.ID), strings.Index(body, v1.ID), "newest first")

	// Deleting passes a confirmation page that says what it touches.
	status, body = b.get("/deployments/" + v2.ID + "/delete")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "process definition jobPrioProcess:2 with 4 job definitions")
	require.Contains(t, body, "jobPrioProcess:2:task2:async-before has 1 unfinished jobs")
	form := url.Values{"csrf": {b.token(body)}, "return": {"/deployments"}}
	_, body = b.post("/deployments/"+v2.ID+"/delete", form)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "unfinished jobs")
	form.Set("cascade", "1")
	_, body = b.post("/deployments/"+v2.ID+"/delete", form)
	require.Contains(t, body, "Deleted deployment "+v2.ID)
	require.Contains(t, body, "1 unfinished jobs deleted")
	require.NotContains(t, body, "jobPrioProcess:2:")

	status, _ = b.get("/deployments/" + v2.ID + "/delete")
	require.Equal(t, http.StatusNotFound, status)

	// Read-only: no delete link, and the POST is refused.
	ro := e.serve(&console.Options{ReadOnly: true})
	_, body = ro.get("/deployments")
	require.NotContains(t, body, "Delete…")
	status, _ = ro.post("/deployments/"+v1.ID+"/delete", url.Values{})
	require.Equal(t, http.StatusForbidden, status)
}
