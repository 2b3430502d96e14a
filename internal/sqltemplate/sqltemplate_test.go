package sqltemplate

import (
	"embed"
	"strings"
	"testing"
)

//go:embed testdata/*.sql
var testFS embed.FS

func TestMustRead(t *testing.T) {
	got := MustRead(testFS, "testdata/sample.sql")
	if !strings.Contains(got, "SELECT id FROM /* TEMPLATE: schema */river_job") {
		t.Fatalf("MustRead returned %q", got)
	}
}

func TestMustReadMissingPanicsNamingTheFile(t *testing.T) {
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, "testdata/absent.sql") {
			t.Fatalf("panic value %v does not name the file", r)
		}
	}()
	MustRead(testFS, "testdata/absent.sql")
	t.Fatal("MustRead of a missing file did not panic")
}

func TestRender(t *testing.T) {
	tmpl := "SELECT /* COLUMNS: x */ FROM /* TEMPLATE: schema */river_job JOIN /* TEMPLATE: schema */t"
	cases := []struct {
		schema string
		extra  []string
		want   string
	}{
		{"", nil, "SELECT /* COLUMNS: x */ FROM river_job JOIN t"},
		{"s1", nil, `SELECT /* COLUMNS: x */ FROM "s1".river_job JOIN "s1".t`},
		{`we"ird`, nil, `SELECT /* COLUMNS: x */ FROM "we""ird".river_job JOIN "we""ird".t`},
		{"s1", []string{"/* COLUMNS: x */", "a, b"}, `SELECT a, b FROM "s1".river_job JOIN "s1".t`},
		{"", []string{"/* COLUMNS: x */", "a"}, "SELECT a FROM river_job JOIN t"},
	}
	for _, c := range cases {
		if got := Render(tmpl, c.schema, c.extra...); got != c.want {
			t.Errorf("Render(%q, %q, %q) = %q, want %q", tmpl, c.schema, c.extra, got, c.want)
		}
	}
}
