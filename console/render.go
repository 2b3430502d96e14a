package console

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/bulk"
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

// renderError renders the error page with status.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, err error) {
	h.render(w, r, status, "error", http.StatusText(status), err.Error())
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
		"age":       func(t time.Time) string { return formatAge(time.Since(t)) },
		"bulkBatch": func() int { return bulk.DefaultBatchSize },
		"filterArgs": func(action string, f *filterForm) filterArgs {
			return filterArgs{Action: h.opts.Prefix + action, Filter: f}
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
