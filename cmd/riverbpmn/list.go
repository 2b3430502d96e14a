package main

// The one implementation of every list verb (`riverbpmn <noun> list` and
// the other verbs that print a page of rows): the connection flags, --json,
// the verb's filter flags, paging with --limit and --after, and the output,
// text columns or JSON, both from the item type's JSON form. A list verb is
// a listSpec: its filters, the call that lists one page, and a small column
// table naming the item's json keys.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// page is the paging of one list call: Limit rows at most (0: the
// listing's default, defaultListLimit) after the cursor After ("" for the
// first page).
type page struct {
	Limit int
	After string
}

// defaultListLimit is the page size of a list verb without --limit (the
// handles' default too).
const defaultListLimit = 100

// size is the page size asked for: Limit, or defaultListLimit.
func (p page) size() int {
	if p.Limit == 0 {
		return defaultListLimit
	}
	return p.Limit
}

// listOutput is what a list verb prints with --json: the page's items and
// the --after of the next page, absent on the last one.
type listOutput[I any] struct {
	Items []I    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// lister lists one page for a list verb: the items and the cursor of the
// next page ("" when there is none).
type lister[I any] func(engine *workflow.Engine, ctx context.Context, p page) (items []I, next string, err error)

// listSpec is one list verb.
type listSpec[I any] struct {
	// path is the verb's place in the tree, such as "timers list".
	path string
	// summary is its line of --help.
	summary string
	// positionals names the arguments it takes, such as PROCESS_INSTANCE_ID.
	positionals []string
	// cursor says what --after names ("job id", "key"): the value of the
	// previous page's next.
	cursor string
	// filters adds the verb's filter flags to fs; the func it returns,
	// called after parsing with the positionals, checks them (an error is a
	// usage error: the database is not opened yet) and returns the lister.
	filters func(fs *flag.FlagSet) func(positionals []string) (lister[I], error)
	// config, if set, is the engine configuration the verb lists with.
	config func() *workflow.Config
	// columns are the text form's columns, in order.
	columns []column
	// empty is the text form of an empty first page.
	empty string
}

// column is one column of a list verb's text form: the value of the item's
// json key (formatted by cell), or what text makes of the whole item.
type column struct {
	// key is the json key of the item the column shows.
	key string
	// header is the column's title; default: key in capitals, "_" as " ".
	header string
	// width, if positive, cuts the value to one line of at most width
	// characters.
	width int
	// text, if set, computes the value from the item's JSON form (row), for
	// a column that combines keys; key then only names the column's source
	// for the column table check.
	text func(r row) string
}

// col is a column showing the item's json key.
func col(key string) column { return column{key: key} }

// colAs is col with a header of its own.
func colAs(key, header string) column { return column{key: key, header: header} }

// title returns the column's header.
func (c column) title() string {
	if c.header != "" {
		return c.header
	}
	return strings.ToUpper(strings.ReplaceAll(c.key, "_", " "))
}

// row is one item's JSON form: its json keys and their values (numbers as
// json.Number).
type row map[string]any

// str returns the text of key's value, "-" for none (see cell).
func (r row) str(key string) string { return cell(r[key]) }

// isSet reports whether key has a value other than null, false, 0 or "".
func (r row) isSet(key string) bool {
	switch v := r[key].(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		return v.String() != "0"
	}
	return true
}

// cell formats one JSON value for a text column: "-" for null or "", a
// time in RFC 3339 (seconds, UTC), a list comma-separated, an object as
// compact JSON.
func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		if v == "" {
			return "-"
		}
		if len(v) >= len("2006-01-02T15:04:05Z") && v[4] == '-' && v[10] == 'T' {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t.UTC().Format(time.RFC3339)
			}
		}
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case []any:
		if len(v) == 0 {
			return "-"
		}
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = cell(e)
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// toRow returns item's JSON form as a row.
func toRow(item any) (row, error) {
	b, err := json.Marshal(item)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	r := row{}
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("a listed item is not a JSON object: %w", err)
	}
	return r, nil
}

// command returns the list verb as a row of the command table.
func (s *listSpec[I]) command() command {
	return command{path: s.path, summary: s.summary, run: s.run}
}

// jsonKeys returns the json keys of the item type I (the keys its JSON
// form can have), for the check that every column names one.
func (s *listSpec[I]) jsonKeys() map[string]bool {
	return jsonKeysOf(reflect.TypeFor[I]())
}

// columnKeys returns the keys the columns name.
func (s *listSpec[I]) columnKeys() []string {
	keys := make([]string, len(s.columns))
	for i, c := range s.columns {
		keys[i] = c.key
	}
	return keys
}

// name returns the verb's path.
func (s *listSpec[I]) name() string { return s.path }

// jsonKeysOf returns the json keys of struct type t (through pointers and
// embedded structs), as encoding/json names them.
func jsonKeysOf(t reflect.Type) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	keys := map[string]bool{}
	if t.Kind() != reflect.Struct {
		return keys
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			for k := range jsonKeysOf(f.Type) {
				keys[k] = true
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[name] = true
	}
	return keys
}

// run is the list verb: parse the flags (filters, --limit, --after,
// connection, --json) and positionals, check them, open the engine, list
// one page and print it.
func (s *listSpec[I]) run(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb(s.path)
	check := s.filters(v.fs)
	var p page
	cursor := s.cursor
	if cursor == "" {
		cursor = "id"
	}
	v.fs.IntVar(&p.Limit, "limit", 0, fmt.Sprintf("at most this many (1 to %d; default %d)", workflow.MaxPageSize, defaultListLimit))
	v.fs.StringVar(&p.After, "after", "", "the page after this "+cursor+" (the previous page's next)")
	positionals, err := v.parse(args, s.positionals...)
	if err != nil {
		return err
	}
	if p.Limit < 0 || p.Limit > workflow.MaxPageSize {
		return fmt.Errorf("--limit %d is out of range: 1 to %d", p.Limit, workflow.MaxPageSize)
	}
	list, err := check(positionals)
	if err != nil {
		return err
	}
	var config *workflow.Config
	if s.config != nil {
		config = s.config()
	}
	engine, closeDB, err := v.engine(ctx, config)
	if err != nil {
		return err
	}
	defer closeDB()
	items, next, err := list(engine, ctx, p)
	if err != nil {
		return paramsError(err, p)
	}
	if items == nil {
		items = []I{}
	}
	out := listOutput[I]{Items: items, Next: next}
	return v.print(stdout, out, func(w io.Writer) error { return s.printText(w, out, p) })
}

// paramsError returns err, from a handle's List, as a usage error when it
// refuses the page's parameters: the handles name the field in their
// message ("timer: ListParams.After \"x\" is not a cursor of this
// listing"), and a cursor is opaque to the CLI, so a bad --after is only
// found there.
func paramsError(err error, p page) error {
	if strings.Contains(err.Error(), "ListParams.After") {
		return usagef("--after %q: %v", p.After, err)
	}
	return err
}

// printText writes a page as a table with the spec's columns, then where
// the next page starts.
func (s *listSpec[I]) printText(w io.Writer, out listOutput[I], p page) error {
	if len(out.Items) == 0 {
		empty := s.empty
		if p.After != "" {
			empty = "nothing after " + p.After
		}
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	titles := make([]string, len(s.columns))
	for i, c := range s.columns {
		titles[i] = c.title()
	}
	fmt.Fprintln(tw, strings.Join(titles, "\t"))
	for _, item := range out.Items {
		r, err := toRow(item)
		if err != nil {
			return err
		}
		cells := make([]string, len(s.columns))
		for i, c := range s.columns {
			value := ""
			if c.text != nil {
				value = c.text(r)
			} else {
				value = r.str(c.key)
			}
			if c.width > 0 {
				value = oneLine(value, c.width)
			}
			cells[i] = value
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if out.Next != "" {
		hint := "--after " + out.Next
		if p.Limit != 0 {
			hint += fmt.Sprintf(" --limit %d", p.Limit)
		}
		_, err := fmt.Fprintf(w, "next page: %s\n", hint)
		return err
	}
	return nil
}

// listVerb is what the command table and its tests know of a listSpec,
// whatever its item type.
type listVerb interface {
	command() command
	name() string
	jsonKeys() map[string]bool
	columnKeys() []string
}

// pageOf returns the page of items after the cursor p.After, for a listing
// the engine gives whole, in its order: the first p.size() items after the
// one whose key is p.After, and the next cursor. An unknown p.After is an
// error naming --after.
func pageOf[I any](items []I, p page, key func(I) string) ([]I, string, error) {
	start := 0
	if p.After != "" {
		start = -1
		for i, item := range items {
			if key(item) == p.After {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, "", usagef("--after %q: no such item (it names the last one of the previous page)", p.After)
		}
	}
	items = items[start:]
	if len(items) > p.size() {
		return items[:p.size()], key(items[p.size()-1]), nil
	}
	return items, "", nil
}
