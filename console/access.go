package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Access is what a request may do in the console.
type Access int

const (
	// AccessNone refuses the request: 401, with a basic-auth challenge.
	AccessNone Access = iota
	// AccessRead shows every page without a form; a POST is refused (403).
	AccessRead
	// AccessOperate shows every page and runs every action.
	AccessOperate
)

// String names the access.
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read-only"
	case AccessOperate:
		return "operator"
	}
	return "none"
}

// Credential grants Access to a request that presents it: HTTP basic auth
// with User and Secret, or, with User empty, the header "Authorization:
// Bearer Secret".
type Credential struct {
	User, Secret string
	Access       Access
}

// Authorizer returns an Options.Authorize hook granting each request the
// access of the credential it presents (the highest, if several match), and
// AccessNone to one that presents none of them. Secrets are compared in
// constant time; an empty Secret never matches.
func Authorizer(creds ...Credential) func(*http.Request) Access {
	type hashed struct {
		user   string
		secret [32]byte
		access Access
	}
	var list []hashed
	for _, c := range creds {
		if c.Secret != "" {
			list = append(list, hashed{user: c.User, secret: sha256.Sum256([]byte(c.Secret)), access: c.Access})
		}
	}
	return func(r *http.Request) Access {
		user, pass, basic := r.BasicAuth()
		token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := AccessNone
		for _, c := range list {
			var presented string
			switch {
			case c.user == "" && bearer:
				presented = strings.TrimSpace(token)
			case c.user != "" && basic && subtle.ConstantTimeCompare([]byte(user), []byte(c.user)) == 1:
				presented = pass
			default:
				continue
			}
			h := sha256.Sum256([]byte(presented))
			if subtle.ConstantTimeCompare(h[:], c.secret[:]) == 1 && c.access > got {
				got = c.access
			}
		}
		return got
	}
}

type accessKey struct{}

// access is the request's access: Options.Authorize's (everyone operates
// without it), at most AccessRead with Options.ReadOnly.
func (h *Handler) access(r *http.Request) Access {
	a := AccessOperate
	if h.opts.Authorize != nil {
		a = h.opts.Authorize(r)
	}
	if h.opts.ReadOnly && a > AccessRead {
		a = AccessRead
	}
	return a
}

// withAccess records the request's access for the pages it renders.
func withAccess(r *http.Request, a Access) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), accessKey{}, a))
}

// readOnly says whether the request may only read.
func readOnly(r *http.Request) bool {
	a, ok := r.Context().Value(accessKey{}).(Access)
	return !ok || a < AccessOperate
}
