package bpmn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/timer"
)

func readFixture(t *testing.T, path string, exprs Expressions) *Model {
	t.Helper()
	content, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(filepath.Base(path), content, exprs)
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	return m
}

// jd is a job definition as the tests state it.
type jd struct {
	activity, typ, config string
	exclusive             bool
	prio, cycle           string
}

func checkJobDefinitions(t *testing.T, p Process, want []jd) {
	t.Helper()
	var got []jd
	for _, d := range p.JobDefinitions {
		got = append(got, jd{d.ActivityID, d.Type, d.Configuration, d.Exclusive, d.Priority, d.RetryCycle})
	}
	if len(got) != len(want) {
		t.Fatalf("process %s: %d job definitions %+v, want %d %+v", p.Key, len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("process %s: job definition %d = %+v, want %+v", p.Key, i, got[i], want[i])
		}
	}
}

func TestReadCamundaPriorities(t *testing.T) {
	m := readFixture(t, "camunda/jobPrioProcess.bpmn20.xml", Expressions{})
	if len(m.Processes) != 1 || m.Processes[0].Key != "jobPrioProcess" || m.Processes[0].Priority != "10" {
		t.Fatalf("processes = %+v", m.Processes)
	}
	// JobPrioritizationBpmnConstantValueTest: task1's jobs get the process's
	// 10, task2's its own 5; asyncBefore and asyncAfter are two definitions.
	checkJobDefinitions(t, m.Processes[0], []jd{
		{"task1", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""},
		{"task1", TypeAsyncContinuation, ConfigurationAsyncAfter, true, "", ""},
		{"task2", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "5", ""},
		{"task2", TypeAsyncContinuation, ConfigurationAsyncAfter, true, "5", ""},
	})

	m = readFixture(t, "camunda/intermediateTimerJobPrioProcess.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{
		{"timer1", TypeTimerIntermediateTransition, "DURATION: PT1M", true, "", ""},
		{"timer2", TypeTimerIntermediateTransition, "DURATION: PT1M", true, "4", ""},
	})
	if m.Processes[0].Priority != "8" {
		t.Errorf("process priority %q, want 8", m.Processes[0].Priority)
	}

	m = readFixture(t, "camunda/boundaryTimerJobPrioProcess.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"timerBoundaryEvent", TypeTimerTransition, "CYCLE: R10/PT10H", true, "20", ""}})

	m = readFixture(t, "camunda/eventSubprocessTimerJobPrioProcess.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"subprocessStartEvent", TypeTimerStartEventSubprocess, "DURATION: PT1M", true, "25", ""}})

	m = readFixture(t, "camunda/JobPrioritizationBpmnConstantValueTest.testTimerStartEventPriorityOnActivity.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"start", TypeTimerStartEvent, "DURATION: PT1M", true, "1515", ""}})
	if tm := m.Processes[0].JobDefinitions[0].Timer; tm == nil || tm.Type != timer.TypeDuration || tm.Value != "PT1M" {
		t.Errorf("timer = %+v", tm)
	}

	// A subprocess's priority is not its activities' (Camunda:
	// testSubProcessPriorityIsNotDefaultForContainedActivities): reported,
	// since the subprocess itself makes no job.
	m = readFixture(t, "camunda/subProcessJobPrioProcess.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"task1", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""}})
	if !hasFinding(m.Unsupported, "subProcess", "jobPriority") {
		t.Errorf("the subprocess's unused priority is not reported: %v", m.Unsupported)
	}
}

func hasFinding(fs []Finding, elementID, attribute string) bool {
	for _, f := range fs {
		if f.ElementID == elementID && strings.HasSuffix(f.Attribute, attribute) {
			return true
		}
	}
	return false
}

func TestReadCamundaMalformedPriority(t *testing.T) {
	content, err := os.ReadFile("testdata/camunda/invalidPrioProcess.bpmn20.xml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read("invalidPrioProcess.bpmn20.xml", content, Expressions{})
	var be *Error
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want *Error", err)
	}
	// Camunda's testFailOnMalformedInput: element task2, value
	// thisIsNotANumber, attribute jobPriority.
	if be.ElementID != "task2" || be.Attribute != "camunda:jobPriority" || be.Value != "thisIsNotANumber" || be.Resource != "invalidPrioProcess.bpmn20.xml" {
		t.Errorf("error = %+v", be)
	}
	for _, part := range []string{"invalidPrioProcess.bpmn20.xml", `"task2"`, "camunda:jobPriority", `"thisIsNotANumber"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %s", err, part)
		}
	}
}

type vipArgs struct{ VIP bool }

func (vipArgs) Kind() string { return "vip" }

func TestReadCamundaPriorityExpressions(t *testing.T) {
	content, err := os.ReadFile("testdata/camunda/jobPrioExpressionProcess.bpmn20.xml")
	if err != nil {
		t.Fatal(err)
	}
	// Without functions: the first expression nothing is registered for.
	_, err = Read("jobPrioExpressionProcess.bpmn20.xml", content, Expressions{})
	var be *Error
	if !errors.As(err, &be) || be.ElementID != "task1" || be.Value != "${priority}" || be.Attribute != "camunda:jobPriority" {
		t.Fatalf("err = %v", err)
	}
	src := priority.FromArgs(func(a vipArgs) int64 {
		if a.VIP {
			return 100
		}
		return 1
	})
	exprs := Expressions{Priorities: map[string]priority.Source{
		"priority":                          src,
		"execution.getVariable('priority')": src,
	}}
	m, err := Read("jobPrioExpressionProcess.bpmn20.xml", content, exprs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"task1": "${priority}", "task2": "${15}", "task3": "${execution.getVariable('priority')}", "task4": "#{16}"}
	for _, d := range m.Processes[0].JobDefinitions {
		if d.Priority != want[d.ActivityID] {
			t.Errorf("%s: priority %q, want %q", d.ActivityID, d.Priority, want[d.ActivityID])
		}
	}
	// ${15} and #{16} are constants; ${priority} is the function.
	for v, wantP := range map[string]int64{"${15}": 15, "#{16}": 16} {
		s, problem := exprs.PrioritySource(v)
		if problem != "" {
			t.Fatal(problem)
		}
		if p, _ := s.Priority(vipArgs{}); p != wantP {
			t.Errorf("%s = %d", v, p)
		}
	}
	s, _ := exprs.PrioritySource("${priority}")
	if p, _ := s.Priority(vipArgs{VIP: true}); p != 100 {
		t.Errorf("${priority} of a VIP = %d, want 100", p)
	}
}

func TestReadCamundaRetryCycles(t *testing.T) {
	m := readFixture(t, "camunda/FoxFailedJobParseListenerTest.testTimer.bpmn20.xml", Expressions{})
	want := map[string][]jd{
		"boundaryEventWithFailedJobRetryTimeCycle":          {{"boundaryTimerWithFailedJobRetryTimeCycle", TypeTimerTransition, "DURATION: PT2H", true, "", "R5/PT5M"}},
		"boundaryEventWithoutFailedJobRetryTimeCycle":       {{"boundaryTimerWithoutFailedJobRetryTimeCycle", TypeTimerTransition, "DURATION: PT2H", true, "", ""}},
		"startEventWithFailedJobRetryTimeCycle":             {{"startEventFailedJobRetryTimeCycle", TypeTimerStartEvent, "DURATION: PT2H", true, "", "R5/PT5M"}},
		"intermediateTimerEventWithFailedJobRetryTimeCycle": {{"timerEventWithFailedJobRetryTimeCycle", TypeTimerIntermediateTransition, "DURATION: PT5M", true, "", "R5/PT5M"}},
	}
	if len(m.Processes) != len(want) {
		t.Fatalf("%d processes", len(m.Processes))
	}
	for _, p := range m.Processes {
		checkJobDefinitions(t, p, want[p.Key])
	}

	// The multi-instance body (asyncAfter on the task) and the inner
	// activity (asyncBefore on the loop characteristics) each take the
	// cycle of their own element.
	m = readFixture(t, "camunda/FoxFailedJobParseListenerTest.testMultiInstanceBodyAndInnerActivityWithFailedJobRetryTimeCycle.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{
		{"task#multiInstanceBody", TypeAsyncContinuation, ConfigurationAsyncAfter, true, "", "R5/PT5M"},
		{"task", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", "R5/PT5M"},
	})

	m = readFixture(t, "camunda/miBodyAsyncProcess.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"task1#multiInstanceBody", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "5", ""}})
}

func TestReadCamundaCallActivity(t *testing.T) {
	m := readFixture(t, "camunda/AsyncTaskTest.testAsyncCallActivity.bpmn20.xml", Expressions{})
	p := m.Processes[0]
	if len(p.CallActivities) != 1 || p.CallActivities[0] != (CallActivity{"callactivity", "asyncService"}) {
		t.Errorf("call activities = %+v", p.CallActivities)
	}
	// camunda:async is Camunda's older name of asyncBefore; on a
	// multi-instance activity it makes the body asynchronous.
	checkJobDefinitions(t, p, []jd{{"callactivity#multiInstanceBody", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""}})
}

func TestReadFlowable(t *testing.T) {
	// Activiti's namespace in Flowable's test: R5/PT5M, 5 executions.
	m := readFixture(t, "flowable/FailedJobRetryCmdTest.testFailedServiceTask.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"failingServiceTask", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", "R5/PT5M"}})
	if !hasFinding(m.Ignored, "failingServiceTask", "activiti:class") {
		t.Errorf("activiti:class is not listed as ignored: %v", m.Ignored)
	}

	content, err := os.ReadFile("testdata/flowable/FailedJobRetryCmdTest.testTimeCycleVariable.bpmn20.xml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read("timeCycleVariable.bpmn20.xml", content, Expressions{})
	var be *Error
	if !errors.As(err, &be) || be.ElementID != "failingServiceTask" || be.Attribute != "flowable:failedJobRetryTimeCycle" || be.Value != "${myVariable}" {
		t.Fatalf("err = %v", err)
	}
	exprs := Expressions{RetryCycles: map[string]RetryCycleFunc{"myVariable": func(river.JobArgs) (string, error) { return "R11/PT5M", nil }}}
	m, err = Read("timeCycleVariable.bpmn20.xml", content, exprs)
	if err != nil {
		t.Fatal(err)
	}
	checkJobDefinitions(t, m.Processes[0], []jd{{"failingServiceTask", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", "${myVariable}"}})

	m = readFixture(t, "flowable/AsyncNonExclusiveJobsTest.testFiveNonExclusiveParallelJobs.bpmn20.xml", Expressions{})
	var want []jd
	for _, id := range []string{"serviceTaskSleep1", "serviceTaskSleep2", "serviceTaskSleep3", "serviceTaskSleep4", "serviceTaskSleep5"} {
		want = append(want, jd{id, TypeAsyncContinuation, ConfigurationAsyncBefore, false, "", ""})
	}
	want = append(want, jd{"parallelGateway2", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""})
	checkJobDefinitions(t, m.Processes[0], want)
}

func TestReadActiviti(t *testing.T) {
	m := readFixture(t, "activiti/AsyncExclusiveJobsTest.testExclusiveJobs.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{
		{"servicetask1", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""},
		{"scriptTaskA", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""},
		{"scriptTaskB", TypeAsyncContinuation, ConfigurationAsyncBefore, true, "", ""},
	})
	m = readFixture(t, "activiti/StartTimerEventTest.testCycleDateStartTimerEvent.bpmn20.xml", Expressions{})
	checkJobDefinitions(t, m.Processes[0], []jd{{"theStart", TypeTimerStartEvent, "CYCLE: 0 0/5 * * * ?", true, "", ""}})
	if len(m.Ignored) != 0 || len(m.Unsupported) != 0 {
		t.Errorf("the diagram is layout, not a finding: %v %v", m.Ignored, m.Unsupported)
	}
	if m.Processes[0].Name != "Timer start event example" {
		t.Errorf("name = %q", m.Processes[0].Name)
	}
}

func TestReadBadInput(t *testing.T) {
	const head = `<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"><process id="p">`
	const tail = `</process></definitions>`
	for _, tc := range []struct {
		name, body                  string
		elementID, attribute, value string
	}{
		{"malformed", `<task id="a">`, "", "", ""},
		{"cycle", `<serviceTask id="a" camunda:asyncBefore="true"><extensionElements><camunda:failedJobRetryTimeCycle>R5/PT5X</camunda:failedJobRetryTimeCycle></extensionElements></serviceTask>`, "a", "camunda:failedJobRetryTimeCycle", "R5/PT5X"},
		{"priority", `<serviceTask id="a" camunda:asyncBefore="true" camunda:jobPriority="high"/>`, "a", "camunda:jobPriority", "high"},
		{"timer", `<intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>PT5X</timeDuration></timerEventDefinition></intermediateCatchEvent>`, "t", "timeDuration", "PT5X"},
		{"cron", `<startEvent id="s"><timerEventDefinition><timeCycle>0 0 25 * * ?</timeCycle></timerEventDefinition></startEvent>`, "s", "timeCycle", "0 0 25 * * ?"},
		{"duplicate", `<task id="a"/><task id="a"/>`, "a", "id", "a"},
		{"boolean", `<task id="a" camunda:asyncBefore="yes"/>`, "a", "camunda:asyncBefore", "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read("bad.bpmn", []byte(head+tc.body+tail), Expressions{})
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if be.Resource != "bad.bpmn" || be.ElementID != tc.elementID || be.Attribute != tc.attribute || be.Value != tc.value {
				t.Errorf("error %+v, want element %q attribute %q value %q", be, tc.elementID, tc.attribute, tc.value)
			}
			t.Log(err)
		})
	}
}

func TestReadReportsUnsupported(t *testing.T) {
	const model = `<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
<process id="p">
  <serviceTask id="ext" camunda:type="external" camunda:topic="charge"/>
  <intermediateThrowEvent id="sig"><signalEventDefinition signalRef="s" camunda:async="true"/></intermediateThrowEvent>
  <intermediateCatchEvent id="tx"><timerEventDefinition><timeDuration>${delay}</timeDuration></timerEventDefinition></intermediateCatchEvent>
  <choreographyTask id="ch"/>
  <userTask id="u" camunda:assignee="kermit" camunda:jobPriority="3"/>
  <userTask id="remind"><extensionElements><camunda:taskListener event="timeout" id="late" class="Remind"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></camunda:taskListener></extensionElements></userTask>
</process></definitions>`
	m, err := Read("r.bpmn", []byte(model), Expressions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ id, attr string }{{"ext", "camunda:type"}, {"sig", "camunda:async"}, {"tx", "timeDuration"}, {"ch", ""}, {"u", "jobPriority"}, {"remind", "camunda:taskListener"}} {
		if !hasFinding(m.Unsupported, want.id, want.attr) {
			t.Errorf("%s %s not reported as unsupported: %v", want.id, want.attr, m.Unsupported)
		}
	}
	if !hasFinding(m.Ignored, "u", "camunda:assignee") || !hasFinding(m.Ignored, "ext", "camunda:topic") {
		t.Errorf("ignored = %v", m.Ignored)
	}
	// The timer expression's definition is kept as written.
	checkJobDefinitions(t, m.Processes[0], []jd{{"tx", TypeTimerIntermediateTransition, "DURATION: ${delay}", true, "", ""}})
}
