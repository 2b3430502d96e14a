package telemetry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every instrument (each Name constant of the package) is in the guide's
// tables and in the package documentation's lists.
func TestEveryInstrumentDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(parsed, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, ident := range spec.Names {
				if !strings.HasPrefix(ident.Name, "Name") || i >= len(spec.Values) {
					continue
				}
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					names = append(names, name)
				}
			}
			return true
		})
	}
	require.GreaterOrEqual(t, len(names), 21, "the instruments of names.go at least")
	guide, err := os.ReadFile("../docs/guides/observability.md")
	require.NoError(t, err)
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, name := range names {
		require.True(t, strings.HasPrefix(name, "riverbpmn."), "%s: riverbpmn's instruments are prefixed riverbpmn.", name)
		require.True(t, strings.Contains(string(guide), "| `"+name+"` |"), "%s: a row of a table of docs/guides/observability.md", name)
		require.True(t, strings.Contains(string(doc), "//\t"+name+" "), "%s: a line of a list of the package documentation (doc.go)", name)
	}
}
