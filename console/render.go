package console

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// page is what every template gets: the layout's fields and the page's own
// data in Data.
type page struct {
	Title      string
	Nav        string
	Prefix     string
	ReadOnly   bool
	CSRF       string
	Return     string
	Flash      string
	FlashError bool
	RiverUIURL string
	Data       any
}

// suspendForm is what the "suspend-forms" template gets: the page (for the
// prefix and the CSRF token) and the target (suspension.TargetType and id).
type suspendForm struct {
	Page     *page
	Type, ID string
}

// timerCells is what the "timer-cells" template gets: the page (prefix,
// CSRF token, read-only) and the timer.
type timerCells struct {
	Page *page
	T    *workflow.TimerInfo
}

// filterArgs is what the "filters" template gets.
type filterArgs struct {
	Action string
	Filter *filterForm
}

// pager links a list's next and first pages; empty when there is none.
type pager struct {
	First string
	Next  string
}

const flashCookie = "riverbpmn_console_flash"

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	p := &page{
		Title:      title,
		Nav:        name,
		Prefix:     h.opts.Prefix,
		ReadOnly:   readOnly(r),
		Return:     h.opts.Prefix + r.URL.RequestURI(),
		RiverUIURL: h.opts.RiverUIURL,
		Data:       data,
	}
	if !p.ReadOnly {
		p.CSRF = h.csrfToken(w, r)
	}
	if c, err := r.Cookie(flashCookie); err == nil {
		if b, err := base64.RawURLEncoding.DecodeString(c.Value); err == nil {
			msg := string(b)
			p.FlashError = strings.HasPrefix(msg, "!")
			p.Flash = strings.TrimPrefix(msg, "!")
		}
		http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: h.cookiePath(), MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		http.Error(w, "console: rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError renders the error page with status: the error's message
// for a bad request, a short one for a failure of the server (500), which
// says what failed without the statement or its arguments.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, err error) {
	msg := err.Error()
	if status >= http.StatusInternalServerError {
		msg = shortError(err)
	}
	h.render(w, r, status, "error", http.StatusText(status), msg)
}

// shortError says in a line what failed: PostgreSQL's message and code, or
// the error's first line, at most 300 characters.
func shortError(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		return fmt.Sprintf("The database failed: %s (SQLSTATE %s).", pgErr.Message, pgErr.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return "The database did not answer in time."
	case errors.Is(err, context.Canceled):
		return "The request was cancelled."
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

// inputProblem names the first value of values that PostgreSQL cannot take
// (a NUL byte, invalid UTF-8): such a value answers 400 before any query.
func inputProblem(what string, values map[string][]string) string {
	for name, vs := range values {
		for _, v := range vs {
			if strings.ContainsRune(name+v, 0) {
				return fmt.Sprintf("%s %s %q holds a NUL byte", what, strings.ReplaceAll(name, "\x00", "\\0"), v)
			}
			if !utf8.ValidString(name + v) {
				return fmt.Sprintf("%s %s is not valid UTF-8", what, strings.ToValidUTF8(name, "?"))
			}
		}
	}
	return ""
}

// setFlash leaves a message for the next page the browser loads (after the
// redirect that follows a POST); isError marks it as a failure.
func (h *Handler) setFlash(w http.ResponseWriter, msg string, isError bool) {
	if isError {
		msg = "!" + msg
	}
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	http.SetCookie(w, &http.Cookie{
		Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(msg)),
		Path: h.cookiePath(), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

// pageURL is the current page's URL with query parameter param set to
// value (or removed when value is empty).
func (h *Handler) pageURL(r *http.Request, param, value string) string {
	q := r.URL.Query()
	if value == "" {
		q.Del(param)
	} else {
		q.Set(param, value)
	}
	u := url.URL{Path: h.opts.Prefix + r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}

// pageOf cuts list, fetched with h.pageSize+1 rows, to a page, and returns
// its pager: the next page's cursor (param) is cursor of the page's last row.
func pageOf[T any](h *Handler, r *http.Request, param string, list []T, cursor func(T) string) ([]T, pager) {
	more := len(list) > h.pageSize
	if more {
		list = list[:h.pageSize]
	}
	last := ""
	if len(list) > 0 {
		last = cursor(list[len(list)-1])
	}
	return list, h.newPager(r, param, more, last)
}

// newPager returns the pager of a list whose cursor is param: next set when
// the page was full (fetched limit+1 rows), first set when not on the first.
func (h *Handler) newPager(r *http.Request, param string, more bool, last string) pager {
	var p pager
	if r.URL.Query().Get(param) != "" {
		p.First = h.pageURL(r, param, "")
	}
	if more {
		p.Next = h.pageURL(r, param, last)
	}
	return p
}

func (h *Handler) funcs() template.FuncMap {
	return template.FuncMap{
		"time": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return "-"
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			case *time.Time:
				if v == nil {
					return "-"
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			}
			return fmt.Sprint(t)
		},
		"age": func(t time.Time) string { return formatAge(time.Since(t)) },
		// pathSegment escapes a value (a process instance id) for one
		// segment of a path: /instances/{{pathSegment .ID}}.
		"pathSegment": url.PathEscape,
		"bulkBatch":   func() int { return bulk.DefaultBatchSize },
		"filterArgs": func(action string, f *filterForm) filterArgs {
			return filterArgs{Action: h.opts.Prefix + action, Filter: f}
		},
		"timerCells": func(p *page, t *workflow.TimerInfo) timerCells {
			return timerCells{Page: p, T: t}
		},
		"suspendForm": func(p *page, typ, id string) suspendForm {
			return suspendForm{Page: p, Type: typ, ID: id}
		},
		"deref": func(p any) string {
			switch v := p.(type) {
			case *int64:
				if v == nil {
					return "-"
				}
				return strconv.FormatInt(*v, 10)
			case *string:
				if v == nil {
					return "-"
				}
				return *v
			case *float64:
				if v == nil {
					return "-"
				}
				return strconv.FormatFloat(*v, 'f', -1, 64)
			}
			return fmt.Sprint(p)
		},
		"yesno": func(b *bool) string {
			switch {
			case b == nil:
				return "-"
			case *b:
				return "yes"
			}
			return "no"
		},
		"dash": func(s string) string {
			if s == "" {
				return "-"
			}
			return s
		},
		"json": func(b []byte) string {
			var out bytes.Buffer
			if err := json.Indent(&out, b, "", "  "); err != nil {
				return string(b)
			}
			return out.String()
		},
		"fold": newFolded,
		"add":  func(a, b int64) int64 { return a + b },
		"truncate": func(n int, s string) string {
			if r := []rune(s); len(r) > n {
				return string(r[:n]) + "…"
			}
			return s
		},
		"riverUIJob": func(id int64) string {
			if h.opts.RiverUIURL == "" {
				return ""
			}
			return h.opts.RiverUIURL + "/jobs/" + strconv.FormatInt(id, 10)
		},
	}
}

// folded is a long text shown folded: its start, and the rest behind a
// <details> (template "fold").
type folded struct {
	Short, Full string
	Long        bool
	Size        int
}

// foldAt is the length beyond which a text is folded; foldMax caps what
// the page holds of it.
const (
	foldAt  = 400
	foldMax = 20_000
)

func newFolded(s string) folded {
	r := []rune(s)
	f := folded{Full: s, Size: len(r)}
	if len(r) <= foldAt {
		return f
	}
	f.Long, f.Short = true, string(r[:300])+"…"
	if len(r) > foldMax {
		f.Full = string(r[:foldMax]) + fmt.Sprintf("… (%d more characters: riverbpmn job ID --json shows them all)", len(r)-foldMax)
	}
	return f
}

// formatAge writes a duration the way an operator reads an age: its two
// largest units.
func formatAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}
