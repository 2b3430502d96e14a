package bpmn_test

import (
	"fmt"

	"github.com/riverbpmn/riverbpmn/bpmn"
)

// ExampleRead reads the job definitions of a Camunda 7 model: an
// asynchronous task with both continuations, a boundary timer with a retry
// cycle, and an external task the job executor has nothing to do with.
func ExampleRead() {
	model := []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <process id="invoice" camunda:jobPriority="10">
    <serviceTask id="charge" camunda:asyncBefore="true" camunda:asyncAfter="true" camunda:exclusive="false"/>
    <boundaryEvent id="late" attachedToRef="charge">
      <extensionElements><camunda:failedJobRetryTimeCycle>R3/PT1M</camunda:failedJobRetryTimeCycle></extensionElements>
      <timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <serviceTask id="notify" camunda:type="external" camunda:topic="mail"/>
  </process>
</definitions>`)
	m, err := bpmn.Read("invoice.bpmn", model, bpmn.Expressions{})
	if err != nil {
		panic(err)
	}
	for _, p := range m.Processes {
		fmt.Printf("process %s, priority %s\n", p.Key, p.Priority)
		for _, d := range p.JobDefinitions {
			fmt.Printf("  %s %s %q exclusive=%t retry=%q\n", d.ActivityID, d.Type, d.Configuration, d.Exclusive, d.RetryCycle)
		}
	}
	for _, f := range m.Unsupported {
		fmt.Println("unsupported:", f)
	}
	// Output:
	// process invoice, priority 10
	//   charge async-continuation "async-before" exclusive=false retry=""
	//   charge async-continuation "async-after" exclusive=false retry=""
	//   late timer-transition "DURATION: PT1H" exclusive=true retry="R3/PT1M"
	// unsupported: invoice.bpmn: serviceTask "notify" camunda:type "external": an external task is fetched by external workers, not run by the job executor: no job definition
}
