package bpmn

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/timer"
)

// The namespaces the reader knows.
const (
	NamespaceBPMN     = "http://www.omg.org/spec/BPMN/20100524/MODEL"
	NamespaceCamunda  = "http://camunda.org/schema/1.0/bpmn"
	NamespaceFox      = "http://www.camunda.com/fox"
	NamespaceActiviti = "http://activiti.org/bpmn"
	NamespaceFlowable = "http://flowable.org/bpmn"

	namespaceBPMNDI = "http://www.omg.org/spec/BPMN/20100524/DI"
)

// engineNamespaces are the extension namespaces, with the prefix findings
// use for them.
var engineNamespaces = map[string]string{
	NamespaceCamunda:  "camunda",
	NamespaceFox:      "fox",
	NamespaceActiviti: "activiti",
	NamespaceFlowable: "flowable",
}

// element is a node of the parsed XML tree.
type element struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*element
	text     strings.Builder
	line     int
}

func (e *element) attr(space, local string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// plainAttr is an attribute without a namespace (BPMN's own).
func (e *element) plainAttr(local string) string {
	v, _ := e.attr("", local)
	return v
}

// engineAttr is the first of camunda:, flowable:, activiti: local that is
// present, with its qualified name.
func (e *element) engineAttr(locals ...string) (value, qualified string, ok bool) {
	for _, ns := range []string{NamespaceCamunda, NamespaceFlowable, NamespaceActiviti} {
		for _, local := range locals {
			if v, ok := e.attr(ns, local); ok {
				return v, engineNamespaces[ns] + ":" + local, true
			}
		}
	}
	return "", "", false
}

func (e *element) child(space, local string) *element {
	for _, c := range e.children {
		if c.name.Space == space && c.name.Local == local {
			return c
		}
	}
	return nil
}

// parseTree reads an XML document into a tree.
func parseTree(content []byte) (*element, error) {
	dec := xml.NewDecoder(bytes.NewReader(content))
	var root *element
	var stack []*element
	for {
		offset := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			el := &element{name: t.Name, attrs: t.Attr, line: 1 + bytes.Count(content[:offset], []byte("\n"))}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("more than one root element")
				}
				root = el
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, el)
			}
			stack = append(stack, el)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// Read reads one BPMN resource. Expressions in priorities and retry cycles
// must have their function in exprs. It returns an *Error for a model that
// cannot be deployed.
func Read(resource string, content []byte, exprs Expressions) (*Model, error) {
	root, err := parseTree(content)
	if err != nil {
		return nil, &Error{Resource: resource, Problem: "is not well-formed XML", Err: err}
	}
	if root.name.Space != NamespaceBPMN || root.name.Local != "definitions" {
		return nil, &Error{Resource: resource, Problem: fmt.Sprintf("root element is {%s}%s, not BPMN 2.0's {%s}definitions", root.name.Space, root.name.Local, NamespaceBPMN)}
	}
	r := &reader{resource: resource, exprs: exprs, model: &Model{Resource: resource}, ids: map[string]int{}}
	if err := r.checkIDs(root); err != nil {
		return nil, err
	}
	for _, c := range root.children {
		switch {
		case c.name.Space == NamespaceBPMN && c.name.Local == "process":
			if err := r.process(c); err != nil {
				return nil, err
			}
		case c.name.Space == NamespaceBPMN && definitionsIgnored[c.name.Local]:
			// Shared declarations (messages, signals, errors, ...) and the
			// diagram: nothing for the job executor.
		case c.name.Space == NamespaceBPMN:
			r.unsupported(c, "", "", "a top-level BPMN element the reader does not read")
		case c.name.Space == namespaceBPMNDI:
			// The diagram: where shapes are drawn.
		default:
			r.ignoredElement(c)
		}
	}
	return r.model, nil
}

// definitionsIgnored are top-level elements with nothing for the job
// executor.
var definitionsIgnored = map[string]bool{
	"message": true, "signal": true, "error": true, "escalation": true,
	"itemDefinition": true, "dataStore": true, "import": true,
	"extensionElements": true, "documentation": true, "category": true,
	"interface": true, "resource": true,
	// A collaboration names pools and message flows; each pool's process is
	// read as a process element.
	"collaboration": true,
}

type reader struct {
	resource string
	exprs    Expressions
	model    *Model
	ids      map[string]int
}

func (r *reader) checkIDs(el *element) error {
	if id := el.plainAttr("id"); id != "" && el.name.Space == NamespaceBPMN {
		if line, dup := r.ids[id]; dup {
			return &Error{Resource: r.resource, ElementID: id, Attribute: "id", Value: id,
				Problem: fmt.Sprintf("duplicate id: line %d declares it too", line)}
		}
		r.ids[id] = el.line
	}
	for _, c := range el.children {
		if err := r.checkIDs(c); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) fail(el *element, attribute, value, problem string, err error) error {
	return &Error{Resource: r.resource, ElementID: el.plainAttr("id"), Attribute: attribute, Value: value, Problem: problem, Err: err}
}

func (r *reader) unsupported(el *element, attribute, value, reason string) {
	r.model.Unsupported = append(r.model.Unsupported, Finding{Resource: r.resource, ElementID: el.plainAttr("id"),
		Element: el.name.Local, Attribute: attribute, Value: value, Reason: reason})
}

func (r *reader) ignored(el *element, attribute, value, reason string) {
	r.model.Ignored = append(r.model.Ignored, Finding{Resource: r.resource, ElementID: el.plainAttr("id"),
		Element: el.name.Local, Attribute: attribute, Value: value, Reason: reason})
}

// ignoredElement records an element of a foreign namespace.
func (r *reader) ignoredElement(el *element) {
	name := el.name.Local
	if prefix, ok := engineNamespaces[el.name.Space]; ok {
		name = prefix + ":" + name
	}
	r.ignored(el, name, "", "an extension the job executor does not use")
}

// Elements of the process by what the reader does with them.
var (
	taskElements = map[string]bool{
		"task": true, "serviceTask": true, "userTask": true, "scriptTask": true,
		"sendTask": true, "receiveTask": true, "manualTask": true,
		"businessRuleTask": true, "callActivity": true,
	}
	subProcessElements = map[string]bool{"subProcess": true, "transaction": true}
	eventElements      = map[string]bool{
		"startEvent": true, "endEvent": true, "intermediateCatchEvent": true,
		"intermediateThrowEvent": true, "boundaryEvent": true,
	}
	gatewayElements = map[string]bool{
		"exclusiveGateway": true, "inclusiveGateway": true, "parallelGateway": true,
		"eventBasedGateway": true, "complexGateway": true,
	}
	// Elements of a process that hold nothing for the job executor.
	passiveElements = map[string]bool{
		"sequenceFlow": true, "laneSet": true, "dataObject": true,
		"dataObjectReference": true, "dataStoreReference": true,
		"textAnnotation": true, "association": true, "documentation": true,
		"ioSpecification": true, "property": true, "group": true,
		"incoming": true, "outgoing": true, "dataInputAssociation": true,
		"dataOutputAssociation": true, "conditionExpression": true,
		"script": true, "humanPerformer": true, "potentialOwner": true,
		"standardLoopCharacteristics": true, "multiInstanceLoopCharacteristics": true,
		"extensionElements": true, "timerEventDefinition": true,
		"messageEventDefinition": true, "signalEventDefinition": true,
		"errorEventDefinition": true, "escalationEventDefinition": true,
		"conditionalEventDefinition": true, "compensateEventDefinition": true,
		"linkEventDefinition": true, "terminateEventDefinition": true,
		"cancelEventDefinition": true, "rendering": true,
	}
)

// Attributes of the engines' namespaces that the reader reads.
var readAttributes = map[string]bool{
	"asyncBefore": true, "asyncAfter": true, "async": true, "asyncLeave": true,
	"exclusive": true, "jobPriority": true,
}

func (r *reader) process(el *element) error {
	p := Process{Key: el.plainAttr("id"), Name: el.plainAttr("name")}
	if p.Key == "" {
		return r.fail(el, "id", "", "a process needs an id: it is the process definition's key", nil)
	}
	if v, qualified, ok := el.engineAttr("jobPriority"); ok {
		if problem := r.exprs.priorityProblem(v); problem != "" {
			return r.fail(el, qualified, v, problem, nil)
		}
		p.Priority = v
	}
	r.reportEngineAttributes(el, "jobPriority")
	if err := r.scope(el, &p, false); err != nil {
		return err
	}
	r.model.Processes = append(r.model.Processes, p)
	return nil
}

// scope reads the flow elements of a process or subprocess.
func (r *reader) scope(el *element, p *Process, eventSubprocess bool) error {
	for _, c := range el.children {
		if c.name.Space != NamespaceBPMN {
			r.ignoredElement(c)
			continue
		}
		local := c.name.Local
		var err error
		switch {
		case taskElements[local], gatewayElements[local]:
			err = r.activity(c, p)
		case subProcessElements[local]:
			if err = r.activity(c, p); err == nil {
				triggered := c.plainAttr("triggeredByEvent") == "true"
				err = r.scope(c, p, triggered)
			}
		case local == "adHocSubProcess":
			r.unsupported(c, "", "", "ad-hoc subprocesses are not read: Camunda 7 does not execute them either")
		case eventElements[local]:
			err = r.event(c, p, eventSubprocess)
		case local == "extensionElements":
			r.extensionElements(c, nil)
		case passiveElements[local]:
		default:
			r.unsupported(c, "", "", "a BPMN element the reader does not know")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// activity reads a task, gateway, call activity or subprocess.
func (r *reader) activity(el *element, p *Process) error {
	id := el.plainAttr("id")
	if id == "" {
		return r.fail(el, "id", "", fmt.Sprintf("a %s needs an id", el.name.Local), nil)
	}
	if el.name.Local == "callActivity" {
		p.CallActivities = append(p.CallActivities, CallActivity{ActivityID: id, CalledElement: el.plainAttr("calledElement")})
	}
	if t, ok := el.attr(NamespaceCamunda, "type"); ok && t == "external" {
		r.unsupported(el, "camunda:type", t, "an external task is fetched by external workers, not run by the job executor: no job definition")
	}
	mi := el.child(NamespaceBPMN, "multiInstanceLoopCharacteristics")
	if mi != nil {
		// Attributes on the activity belong to the multi-instance body, those
		// on its loop characteristics to the inner activity.
		if err := r.continuations(el, el, id+MultiInstanceBodySuffix, p); err != nil {
			return err
		}
		if err := r.continuations(mi, el, id, p); err != nil {
			return err
		}
		r.extensionElements(el.child(NamespaceBPMN, "extensionElements"), el)
		r.extensionElements(mi.child(NamespaceBPMN, "extensionElements"), mi)
		r.reportEngineAttributes(mi, "asyncBefore", "asyncAfter", "async", "asyncLeave", "exclusive")
		r.reportEngineAttributes(el, "asyncBefore", "asyncAfter", "async", "asyncLeave", "exclusive", "jobPriority")
		return nil
	}
	if err := r.continuations(el, el, id, p); err != nil {
		return err
	}
	r.extensionElements(el.child(NamespaceBPMN, "extensionElements"), el)
	r.reportEngineAttributes(el, "asyncBefore", "asyncAfter", "async", "asyncLeave", "exclusive", "jobPriority")
	return nil
}

// continuations adds the async continuations that the async attributes of
// holder (the activity, or its multiInstanceLoopCharacteristics) make for
// activityID. The priority is always the activity's (Camunda reads
// camunda:jobPriority from the activity element); the retry cycle is
// holder's.
func (r *reader) continuations(holder, activity *element, activityID string, p *Process) error {
	before, _, err := r.flag(holder, false, "asyncBefore", "async")
	if err != nil {
		return err
	}
	after, _, err := r.flag(holder, false, "asyncAfter", "asyncLeave")
	if err != nil {
		return err
	}
	cycle, err := r.retryCycle(holder)
	if err != nil {
		return err
	}
	prio, err := r.priority(activity)
	if err != nil {
		return err
	}
	if !before && !after {
		if cycle != "" && holder == activity && activity.child(NamespaceBPMN, "multiInstanceLoopCharacteristics") == nil && !isTimerEvent(activity) {
			r.unsupported(holder, "failedJobRetryTimeCycle", cycle, "the element is not asynchronous, so no job uses this retry cycle")
		}
		if prio != "" && holder == activity && activity.child(NamespaceBPMN, "multiInstanceLoopCharacteristics") == nil && !isTimerEvent(activity) {
			r.unsupported(holder, "jobPriority", prio, "the element is not asynchronous, so no job uses this priority")
		}
		return nil
	}
	exclusive, _, err := r.flag(holder, true, "exclusive")
	if err != nil {
		return err
	}
	for _, c := range []struct {
		on     bool
		config string
	}{{before, ConfigurationAsyncBefore}, {after, ConfigurationAsyncAfter}} {
		if c.on {
			p.JobDefinitions = append(p.JobDefinitions, JobDefinition{
				ActivityID: activityID, Type: TypeAsyncContinuation, Configuration: c.config,
				Exclusive: exclusive, Priority: prio, RetryCycle: cycle,
			})
		}
	}
	return nil
}

func isTimerEvent(el *element) bool {
	return el.child(NamespaceBPMN, "timerEventDefinition") != nil
}

// flag reads a boolean engine attribute (the first of locals present), or
// def when there is none.
func (r *reader) flag(el *element, def bool, locals ...string) (bool, string, error) {
	v, qualified, ok := el.engineAttr(locals...)
	if !ok {
		return def, "", nil
	}
	switch strings.TrimSpace(v) {
	case "true":
		return true, qualified, nil
	case "false":
		return false, qualified, nil
	}
	return false, "", r.fail(el, qualified, v, `is not a boolean: use "true" or "false"`, nil)
}

// priority reads and checks an element's camunda:jobPriority.
func (r *reader) priority(el *element) (string, error) {
	v, qualified, ok := el.engineAttr("jobPriority")
	if !ok {
		return "", nil
	}
	if problem := r.exprs.priorityProblem(v); problem != "" {
		return "", r.fail(el, qualified, v, problem, nil)
	}
	return v, nil
}

// retryCycle reads and checks the failedJobRetryTimeCycle extension element
// of el.
func (r *reader) retryCycle(el *element) (string, error) {
	ext := el.child(NamespaceBPMN, "extensionElements")
	if ext == nil {
		return "", nil
	}
	for _, ns := range []string{NamespaceCamunda, NamespaceFox, NamespaceFlowable, NamespaceActiviti} {
		c := ext.child(ns, "failedJobRetryTimeCycle")
		if c == nil {
			continue
		}
		v := strings.TrimSpace(c.text.String())
		qualified := engineNamespaces[ns] + ":failedJobRetryTimeCycle"
		if v == "" {
			return "", nil
		}
		if IsExpression(v) {
			if problem := r.exprs.retryCycleProblem(v); problem != "" {
				return "", r.fail(el, qualified, v, problem, nil)
			}
			return v, nil
		}
		if _, err := retrypolicy.ParseCycle(v); err != nil {
			return "", r.fail(el, qualified, v, "is not a valid retry time cycle", err)
		}
		return v, nil
	}
	return "", nil
}

// event reads a start, end, intermediate or boundary event.
func (r *reader) event(el *element, p *Process, eventSubprocess bool) error {
	id := el.plainAttr("id")
	if id == "" {
		return r.fail(el, "id", "", fmt.Sprintf("a %s needs an id", el.name.Local), nil)
	}
	if err := r.continuations(el, el, id, p); err != nil {
		return err
	}
	for _, def := range el.children {
		if def.name.Space != NamespaceBPMN || !strings.HasSuffix(def.name.Local, "EventDefinition") {
			continue
		}
		if def.name.Local == "timerEventDefinition" {
			if err := r.timerEvent(el, def, p, eventSubprocess); err != nil {
				return err
			}
			continue
		}
		if v, qualified, ok := def.engineAttr("async"); ok {
			r.model.Unsupported = append(r.model.Unsupported, Finding{Resource: r.resource, ElementID: id, Element: def.name.Local, Attribute: qualified, Value: v,
				Reason: "an asynchronous " + strings.TrimSuffix(def.name.Local, "EventDefinition") + " event makes a job of Camunda's type \"event\", which the reader does not make"})
		}
		r.reportEngineAttributes(def, "async")
	}
	r.extensionElements(el.child(NamespaceBPMN, "extensionElements"), el)
	r.reportEngineAttributes(el, "asyncBefore", "asyncAfter", "async", "asyncLeave", "exclusive", "jobPriority")
	return nil
}

// timerEvent adds the timer job definition of a timer event.
func (r *reader) timerEvent(event, def *element, p *Process, eventSubprocess bool) error {
	var typ string
	switch event.name.Local {
	case "startEvent":
		typ = TypeTimerStartEvent
		if eventSubprocess {
			typ = TypeTimerStartEventSubprocess
		}
	case "intermediateCatchEvent":
		typ = TypeTimerIntermediateTransition
	case "boundaryEvent":
		typ = TypeTimerTransition
	default:
		r.unsupported(def, "", "", "a timer on a "+event.name.Local+" is not BPMN")
		return nil
	}
	var tm *Timer
	for _, f := range []struct {
		local  string
		typ    timer.Type
		config string
	}{{"timeDate", timer.TypeDate, "DATE"}, {"timeCycle", timer.TypeCycle, "CYCLE"}, {"timeDuration", timer.TypeDuration, "DURATION"}} {
		c := def.child(NamespaceBPMN, f.local)
		if c == nil {
			continue
		}
		v := strings.TrimSpace(c.text.String())
		tm = &Timer{Type: f.typ, Value: v}
		if IsExpression(v) {
			r.unsupported(event, f.local, v, "a timer expression is evaluated by whoever creates the timer; the job definition keeps it as written")
		} else if _, err := timer.Parse(f.typ, v); err != nil {
			return r.fail(event, f.local, v, "is not a valid timer", err)
		}
		break
	}
	if tm == nil {
		return r.fail(event, "timerEventDefinition", "", "a timer needs timeDate, timeCycle or timeDuration", nil)
	}
	exclusive, _, err := r.flag(def, true, "exclusive")
	if err != nil {
		return err
	}
	r.reportEngineAttributes(def, "exclusive")
	prio, err := r.priority(event)
	if err != nil {
		return err
	}
	cycle, err := r.retryCycle(event)
	if err != nil {
		return err
	}
	config := map[timer.Type]string{timer.TypeDate: "DATE", timer.TypeCycle: "CYCLE", timer.TypeDuration: "DURATION"}[tm.Type]
	p.JobDefinitions = append(p.JobDefinitions, JobDefinition{
		ActivityID: event.plainAttr("id"), Type: typ, Configuration: config + ": " + tm.Value,
		Exclusive: exclusive, Priority: prio, RetryCycle: cycle, Timer: tm,
	})
	return nil
}

// reportEngineAttributes lists the engines' attributes of el that the
// reader does not read (read names the ones it does).
func (r *reader) reportEngineAttributes(el *element, read ...string) {
	for _, a := range el.attrs {
		prefix, ok := engineNamespaces[a.Name.Space]
		if !ok {
			continue
		}
		handled := false
		for _, l := range read {
			if a.Name.Local == l {
				handled = true
			}
		}
		if handled {
			continue
		}
		if readAttributes[a.Name.Local] {
			r.unsupported(el, prefix+":"+a.Name.Local, a.Value, "has no effect on this element")
			continue
		}
		r.ignored(el, prefix+":"+a.Name.Local, a.Value, "used by an executing engine, not by the job executor")
	}
}

// extensionElements lists the extension elements of ext that the reader
// does not read.
func (r *reader) extensionElements(ext, owner *element) {
	if ext == nil {
		return
	}
	if owner == nil {
		owner = ext
	}
	for _, c := range ext.children {
		prefix, ok := engineNamespaces[c.name.Space]
		if ok && c.name.Local == "failedJobRetryTimeCycle" {
			continue // read with the job definitions
		}
		name := c.name.Local
		if ok {
			name = prefix + ":" + name
		}
		if ok && c.name.Local == "taskListener" && c.child(NamespaceBPMN, "timerEventDefinition") != nil {
			r.model.Unsupported = append(r.model.Unsupported, Finding{Resource: r.resource, ElementID: owner.plainAttr("id"),
				Element: owner.name.Local, Attribute: name, Value: c.plainAttr("id"),
				Reason: "a timeout task listener makes a job of Camunda's type \"timer-task-listener\", which the reader does not make"})
			continue
		}
		r.model.Ignored = append(r.model.Ignored, Finding{Resource: r.resource, ElementID: owner.plainAttr("id"),
			Element: owner.name.Local, Attribute: name, Reason: "an extension the job executor does not use"})
	}
}
