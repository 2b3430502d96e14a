// Package bpmn reads the job executor's configuration out of BPMN 2.0 XML, as
// Camunda 7, Flowable and Activiti do when a model is deployed. A model is
// read, never executed: what comes out is process definitions (key, name,
// process-level priority, call activities) and job definitions (async
// continuations, timers, multi-instance bodies) with their exclusive flags,
// priorities and retry time cycles.
//
// # What becomes a job definition
//
// Job definitions follow Camunda's parser (its BpmnParse and
// DefaultFailedJobParseListener):
//
//   - an activity with camunda:asyncBefore (flowable:async, activiti:async)
//     gives a job definition of type "async-continuation" with configuration
//     "async-before"; camunda:asyncAfter (flowable:asyncLeave) gives a second
//     one, "async-after";
//   - a multi-instance activity's async attributes on the activity itself
//     belong to its multi-instance body, whose activity id is the activity's
//     suffixed with "#multiInstanceBody"; those on its
//     multiInstanceLoopCharacteristics belong to the inner activity. The
//     retry cycle follows the same split;
//   - a timer event gives one job definition whose configuration is
//     Camunda's "DATE: ...", "DURATION: ..." or "CYCLE: ...": type
//     "timer-start-event" for a process's start event,
//     "timer-start-event-subprocess" for an event subprocess's,
//     "timer-intermediate-transition" for an intermediate catch event and
//     "timer-transition" for a boundary event. Its exclusive flag is
//     camunda:exclusive on the timerEventDefinition.
//
// Exclusive is true unless the element says camunda:exclusive="false" (or
// flowable:/activiti:exclusive). camunda:jobPriority is read from the
// process and from each activity; the failedJobRetryTimeCycle extension
// element from the camunda, fox (Camunda's older namespace), activiti and
// flowable namespaces.
//
// # Expressions
//
// A priority or retry cycle written as an expression, "${name}" or
// "#{name}", binds to a Go function registered under the expression's body
// in Expressions; an integer literal body ("${15}") is a constant. An
// expression nothing is registered for is an *Error naming the resource,
// the element id, the attribute and the expression.
//
// # What is reported
//
// Everything in the model that bears on the job executor but cannot be
// applied (timer expressions, asynchronous signal events, timeout task
// listeners, external tasks,
// a priority or retry cycle on an element that makes no job, BPMN elements
// the reader does not know) is listed in Model.Unsupported; attributes and
// extension elements of the engines' namespaces that only an executing
// engine uses (delegates, assignees, listeners, forms) are listed in
// Model.Ignored. Nothing is dropped silently.
//
// # Errors
//
// Malformed XML, an invalid constant priority or retry cycle, a timer that
// does not parse, an unregistered expression and a duplicate id are each an
// *Error naming the resource, the element id, the attribute and the value.
package bpmn
