package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// An action does one change and says what it did; the console then
// redirects (303) to the page the form was on, which shows the message.
type actionFunc func(r *http.Request) (string, error)

// action wraps a change: CSRF check (read-only mode is refused earlier, in
// ServeHTTP), then the change, then a redirect back with the outcome.
func (h *Handler) action(f actionFunc) http.HandlerFunc {
	return h.post(64<<10, func(w http.ResponseWriter, r *http.Request) {
		msg, err := f(r)
		if err != nil {
			h.setFlash(w, err.Error(), true)
		} else {
			h.setFlash(w, msg, false)
		}
		http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
	})
}

// returnTo is the page to go back to after an action: the form's "return"
// field when it is a path inside the console, else the incidents page.
func (h *Handler) returnTo(r *http.Request) string {
	back := r.PostFormValue("return")
	if h.insidePath(back) {
		return back
	}
	return h.opts.Prefix + "/"
}

// insidePath says whether back is a path inside the console, safe to
// redirect to: under the prefix, no scheme or host, no backslash, and no
// control character (browsers drop tabs and newlines from a URL, so
// "/\t/evil.example" would become the other host "//evil.example").
func (h *Handler) insidePath(back string) bool {
	if !strings.HasPrefix(back, h.opts.Prefix+"/") || strings.HasPrefix(back, "//") {
		return false
	}
	bad := func(c rune) bool { return c < 0x20 || c == 0x7f || c == '\\' }
	if strings.IndexFunc(back, bad) >= 0 {
		return false
	}
	u, err := url.Parse(back)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil &&
		strings.IndexFunc(u.Path, bad) < 0 && !strings.HasPrefix(u.Path, "//")
}

func pathID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s id %q is not a positive integer", what, r.PathValue("id"))
	}
	return id, nil
}

func formInt(r *http.Request, field string) (int64, error) {
	s := strings.TrimSpace(r.PostFormValue(field))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", field, s)
	}
	return n, nil
}

func (h *Handler) setRetries(r *http.Request) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	n, err := formInt(r, "retries")
	if err != nil {
		return "", err
	}
	if n < 0 || n > 1<<15 {
		return "", fmt.Errorf("retries %d is out of range: 0 to 32767", n)
	}
	if err := h.engine.SetJobRetries(r.Context(), id, int(n)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Job %d: retries set to %d.", id, n), nil
}

func (h *Handler) setJobPriority(r *http.Request) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	p, err := formInt(r, "priority")
	if err != nil {
		return "", err
	}
	if err := h.engine.SetJobPriority(r.Context(), id, p); err != nil {
		return "", err
	}
	return fmt.Sprintf("Job %d: priority set to %d.", id, p), nil
}

func (h *Handler) setOverride(r *http.Request) (string, error) {
	def := r.PostFormValue("definition")
	p, err := formInt(r, "priority")
	if err != nil {
		return "", err
	}
	cascade := r.PostFormValue("cascade") != ""
	if err := h.engine.SetOverridingJobPriority(r.Context(), def, p, cascade); err != nil {
		return "", err
	}
	if cascade {
		return fmt.Sprintf("Job definition %q: overriding priority set to %d, and applied to its unfinished jobs.", def, p), nil
	}
	return fmt.Sprintf("Job definition %q: overriding priority set to %d (for new jobs).", def, p), nil
}

func (h *Handler) clearOverride(r *http.Request) (string, error) {
	def := r.PostFormValue("definition")
	if err := h.engine.ClearOverridingJobPriority(r.Context(), def); err != nil {
		return "", err
	}
	return fmt.Sprintf("Job definition %q: overriding priority cleared.", def), nil
}

// setExclusiveScope records the posted scope as the exclusive scope in
// force in the schema (Engine.SetExclusiveScope; riverbpmn exclusive-scope
// --set).
func (h *Handler) setExclusiveScope(r *http.Request) (string, error) {
	name := r.PostFormValue("scope")
	scope, err := exclusive.ParseScope(name)
	if err != nil {
		return "", fmt.Errorf("scope %q is not one of process-instance, root-process-instance, none", name)
	}
	set := h.engine.SetExclusiveScope
	if r.PostFormValue("force") == "yes" {
		set = h.engine.ForceExclusiveScope
	}
	previous, err := set(r.Context(), scope)
	if err != nil {
		return "", err
	}
	was := "none recorded"
	if previous != nil {
		was = "was " + previous.String()
	}
	return fmt.Sprintf("Recorded the exclusive scope %s (%s). Clients started with another scope refuse to start; running clients keep the scope they started with until restarted.", scope, was), nil
}

func (h *Handler) deleteStaleLocks(r *http.Request) (string, error) {
	n, err := h.engine.DeleteStaleExclusiveLocks(r.Context())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted %d stale or free exclusive lock rows.", n), nil
}

// dueLayouts are the forms a date and time is accepted in: an HTML
// datetime-local input (read as UTC) and RFC 3339.
var dueLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339}

// parseUTC parses a date and time in one of dueLayouts.
func parseUTC(s string) (t time.Time, err error) {
	for _, layout := range dueLayouts {
		if t, err = time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return t, err
}

func (h *Handler) setTimerDueDate(r *http.Request) (string, error) {
	id, err := pathID(r, "timer")
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(r.PostFormValue("due"))
	due, err := parseUTC(s)
	if err != nil {
		return "", fmt.Errorf("due %q is not a date and time (YYYY-MM-DDTHH:MM, UTC)", s)
	}
	cascade := r.PostFormValue("cascade") != ""
	before, err := h.engine.Timer(r.Context(), id)
	if err != nil {
		return "", err
	}
	shift, err := h.engine.SetTimerDueDate(r.Context(), id, due, cascade)
	if err != nil {
		return "", err
	}
	return timerMoveText(id, before.NextDueAt, due, cascade, shift), nil
}

// timerMoveText says how far a timer's due date moved (from was, when it
// had one, to due), and how far its later occurrences move with cascade.
func timerMoveText(id int64, was *time.Time, due time.Time, cascade bool, shift time.Duration) string {
	msg := fmt.Sprintf("Timer %d: due %s", id, due.UTC().Format(time.RFC3339))
	if was != nil {
		move := due.Sub(*was)
		switch {
		case move > 0:
			msg += fmt.Sprintf(" (moved %s later, from %s)", formatDuration(move), was.UTC().Format(time.RFC3339))
		case move < 0:
			msg += fmt.Sprintf(" (moved %s earlier, from %s)", formatDuration(-move), was.UTC().Format(time.RFC3339))
		default:
			msg += " (unchanged)"
		}
	}
	if cascade {
		msg += fmt.Sprintf("; its later occurrences move by %s too", formatDuration(shift))
	}
	return msg + "."
}

// formatDuration writes d rounded to the second, as Go does ("1h30m0s").
func formatDuration(d time.Duration) string { return d.Round(time.Second).String() }

func (h *Handler) cancelTimer(r *http.Request) (string, error) {
	id, err := pathID(r, "timer")
	if err != nil {
		return "", err
	}
	jobs, err := h.engine.CancelTimer(r.Context(), id)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Timer %d cancelled (%d job(s) cancelled).", id, len(jobs)), nil
}
