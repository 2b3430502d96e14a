package main

// No secret in any output: what run prints on stderr (errors, usage text,
// warnings) has the passwords of database URLs and connection strings
// replaced by xxxxx.

import (
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// redacted replaces a password.
const redacted = "xxxxx"

var (
	// urlPassword matches the password of a URL's user info, such as
	// postgres://user:PASSWORD@host (any scheme: pgx also takes
	// postgresql://).
	urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/?#@\s]*:)([^@\s/]*)@`)
	// dsnPassword matches the password of a key/value connection string,
	// such as "host=h password=PASSWORD" or password='pass word'.
	dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'"]+)`)
)

// redactSecrets returns s with the passwords of URLs and key/value
// connection strings replaced, and every occurrence of the literal secrets
// too (a password pgx or PostgreSQL might quote outside a URL).
func redactSecrets(s string, secrets []string) string {
	s = urlPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	s = dsnPassword.ReplaceAllString(s, "${1}"+redacted)
	for _, secret := range secrets {
		if secret != "" && secret != redacted {
			s = strings.ReplaceAll(s, secret, redacted)
		}
	}
	return s
}

// urlPasswords returns the passwords of the database URLs a run may use:
// $DATABASE_URL's and those given as --database-url among args. Not
// parseable, an argument is ignored (the patterns still apply).
func urlPasswords(args []string) []string {
	urls := []string{os.Getenv("DATABASE_URL")}
	for i, arg := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name != "database-url" || !strings.HasPrefix(arg, "-") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		urls = append(urls, value)
	}
	var secrets []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			if password, ok := u.User.Password(); ok {
				// As given and as the URL spells it escaped.
				secrets = append(secrets, password, url.QueryEscape(password), url.PathEscape(password))
			}
		}
	}
	return secrets
}

// redactingWriter writes what is written to it to w, redacted. Every write
// of run's stderr is a whole message (fmt.Fprintf of a line or more), so a
// password is never split between two writes.
type redactingWriter struct {
	w       io.Writer
	secrets []string
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redactSecrets(string(p), r.secrets)); err != nil {
		return 0, err
	}
	return len(p), nil
}
