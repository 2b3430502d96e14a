package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
)

// CSRF protection: a double-submit cookie bound to the handler's secret.
//
// The first page a browser loads sets a random value in the cookie
// riverbpmn_console_csrf (HttpOnly, SameSite=Strict, scoped to the prefix).
// Every form carries the token HMAC-SHA256(secret, cookie value). A POST is
// accepted only when its form token matches the HMAC of the cookie it came
// with. Another site can neither read the cookie nor the token (same-origin
// policy), nor forge a token for a cookie it planted (it would need the
// secret); SameSite=Strict keeps the cookie off cross-site requests anyway,
// and a POST whose Origin header names another host is refused outright.

const (
	csrfCookie = "riverbpmn_console_csrf"
	csrfField  = "csrf"
)

// csrfToken returns the form token for the request's CSRF cookie, setting a
// new cookie first when the request has none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		return h.csrfMAC(c.Value)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	value := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name:     csrfCookie,
		Value:    value,
		Path:     h.cookiePath(),
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return h.csrfMAC(value)
}

func (h *Handler) csrfMAC(cookie string) string {
	mac := hmac.New(sha256.New, h.secret)
	mac.Write([]byte("riverbpmn console csrf\x00"))
	mac.Write([]byte(cookie))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// csrfProblem says why a POST fails the CSRF check; "" when it passes.
func (h *Handler) csrfProblem(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return "the request comes from another site (Origin " + origin + ")"
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) < 32 {
		return "the CSRF cookie is missing: load the page again and retry"
	}
	token := r.PostFormValue(csrfField)
	if token == "" {
		return "the form has no CSRF token"
	}
	if !hmac.Equal([]byte(token), []byte(h.csrfMAC(c.Value))) {
		return "the CSRF token does not match: load the page again and retry"
	}
	return ""
}

func (h *Handler) cookiePath() string {
	if h.opts.Prefix == "" {
		return "/"
	}
	return h.opts.Prefix + "/"
}
