package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/deployment"
)

func TestDeploymentsCommands(t *testing.T) {
	url, schema := migratedSchema(t)
	conn := []string{"--database-url", url, "--schema", schema}
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, append(args, conn...)...)
	}
	const model = "../../bpmn/testdata/camunda/jobPrioProcess.bpmn20.xml"

	code, out, errOut := cli("deployments", "create", model, "../../bpmn/testdata/camunda/boundaryTimerJobPrioProcess.bpmn20.xml", "--name", "prio", "--json")
	require.Equal(t, 0, code, errOut)
	var dep deployment.Deployment
	require.NoError(t, json.Unmarshal([]byte(out), &dep), out)
	require.Equal(t, "prio", dep.Name)
	require.Equal(t, "cli", dep.Source)
	require.Len(t, dep.ProcessDefinitions, 2)
	require.Equal(t, "jobPrioProcess:1:task2:async-before", dep.ProcessDefinitions[0].JobDefinitions[2].ID)
	require.Equal(t, "5", dep.ProcessDefinitions[0].JobDefinitions[2].Priority)

	// The same files again: nothing deployed.
	code, out, errOut = cli("deployments", "create", model, "../../bpmn/testdata/camunda/boundaryTimerJobPrioProcess.bpmn20.xml", "--name", "prio")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "nothing deployed")
	require.Contains(t, out, dep.ID)

	code, out, errOut = cli("deployments", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, dep.ID)
	require.Contains(t, out, "jobPrioProcess:1")

	code, out, errOut = cli("deployments", "show", dep.ID)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"jobPrioProcess:1:task1:async-after", "timer-transition", "CYCLE: R10/PT10H", "sha256 "} {
		require.Contains(t, out, want)
	}

	// Bad input: exit 2, the file, element, attribute and value named.
	code, _, errOut = cli("deployments", "create", "../../bpmn/testdata/camunda/invalidPrioProcess.bpmn20.xml")
	require.Equal(t, exitUsage, code)
	for _, want := range []string{"invalidPrioProcess.bpmn20.xml", `"task2"`, "camunda:jobPriority", `"thisIsNotANumber"`} {
		require.Contains(t, errOut, want)
	}
	// An expression the CLI cannot bind, unless told to leave it to the
	// inserting engine.
	const expr = "../../bpmn/testdata/flowable/FailedJobRetryCmdTest.testTimeCycleVariable.bpmn20.xml"
	code, _, errOut = cli("deployments", "create", expr)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "${myVariable}")
	code, out, errOut = cli("deployments", "create", expr, "--unbound-expressions", "--json")
	require.Equal(t, 0, code, errOut)
	var unbound deployment.Deployment
	require.NoError(t, json.Unmarshal([]byte(out), &unbound), out)

	code, out, errOut = cli("deployments", "delete", unbound.ID, "--json")
	require.Equal(t, 0, code, errOut)
	var deleted deployment.DeleteResult
	require.NoError(t, json.Unmarshal([]byte(out), &deleted), out)
	require.Equal(t, unbound.ID, deleted.Deployment.ID)

	code, _, errOut = cli("deployments", "show", unbound.ID)
	require.Equal(t, exitNotFound, code)
	require.Contains(t, errOut, "not found")
	code, _, errOut = cli("deployments", "frobnicate")
	require.Equal(t, exitUsage, code)
	require.True(t, strings.Contains(errOut, `unknown verb "frobnicate" of "deployments"`), errOut)
}
