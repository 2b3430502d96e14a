// Package docscheck keeps README.md and docs/ true to the code: `make
// docs-check` runs its tests, which check the repository's Markdown with
// Check and then compile every package a Go snippet mirrors.
//
// What Check verifies, file by file:
//
//   - Go snippets. Every ```go block names the file it mirrors in its info
//     string (```go mirror=workflow/example_docs_test.go, optionally
//     #FuncName to look only inside one function). Its lines, with leading
//     and trailing blanks ignored, must appear in that file as one
//     contiguous run; a snippet line "// ..." stands for any number of
//     source lines. The mirrored files are Example functions or programs the
//     test suite compiles (and, with an Output comment, runs), so a snippet
//     cannot drift from code that builds. A block marked nocheck is reported
//     as unchecked; the repository's docs use none.
//   - Go code in doc comments. The code blocks of a package doc named in
//     Options.GoDocMirrors (workflow/doc.go, the front door) match their
//     mirror the same way.
//   - Links. Every relative link and image resolves to a file or directory
//     inside the repository, and every #anchor to a heading of its target
//     (GitHub's heading ids).
//   - References to outside the repository: SEMANTICS.md, DESIGN.md,
//     "issue N", "seed N", ../shared, /work/; and "REGARDS" in a file that
//     never says "CNES REGARDS" (what it is).
//   - Test names. A backticked TestX, ExampleX, BenchmarkX or FuzzX names a
//     function defined in a _test.go file of the repository.
//   - Go names. A backticked pkg.Name, where pkg is a package directory of
//     the repository, names an exported function, type, variable or
//     constant of it (pkg.Type.Method a method of that type); engine.Name
//     names a method of workflow.Engine.
//   - Shell commands (```sh, ```bash and the "$ " lines of ```console). A
//     riverbpmn command names a command of the CLI (its longest path of up
//     to three words, such as "exclusive locks list"), and each flag it
//     shows is a flag of that command (asked of the built CLI with --help). A make command
//     names a target of the Makefile that CI runs (.ci/run) or one listed in
//     Options.MakeTargets with the reason it is verified elsewhere. A go test
//     command names existing packages, and its -run pattern matches a test
//     there. Any other command must be listed in Options.Verified, with the
//     reason.
package docscheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is one thing wrong in one file.
type Problem struct {
	File string // relative to the repository root
	Line int    // 1-based; 0 when the problem is the whole file
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// CLIHelp returns the flags of one command of the riverbpmn command (names
// without dashes), and false when there is no such command. The command is
// its path, words separated by spaces ("timers set-due-date").
type CLIHelp func(verb string) (flags map[string]bool, ok bool)

// Options says what to check and how.
type Options struct {
	// Root is the repository root (the directory holding go.mod).
	Root string
	// Markdown lists the Markdown files to check, relative to Root. Empty:
	// README.md and every .md file under docs/.
	Markdown []string
	// Prose lists other files (Go package docs), relative to Root, checked
	// for references to outside the repository and test names.
	Prose []string
	// GoDocMirrors maps a Go file of Prose to the file its doc comment's
	// code blocks mirror: each block must match that file as a Markdown
	// snippet must match its mirror.
	GoDocMirrors map[string]string
	// CLI answers for riverbpmn commands. Nil: every riverbpmn command is a
	// problem.
	CLI CLIHelp
	// MakeTargets are make targets shown in docs though CI does not run
	// them, each with the reason it is verified elsewhere.
	MakeTargets map[string]string
	// Verified are the other shell commands shown, exactly as written, each
	// with the reason it is verified elsewhere.
	Verified map[string]string
}

// Report is what Check found.
type Report struct {
	Problems []Problem
	// Unchecked are the Go snippets marked nocheck.
	Unchecked []Problem
	// Mirrored are the Go files the snippets mirror, relative to Root: the
	// caller compiles their packages.
	Mirrored []string
	// UnusedVerified are the commands of Options.Verified no file shows: a
	// list of exceptions that outlived its use.
	UnusedVerified []string
}

// Check checks the files of opts.
func Check(opts Options) (*Report, error) {
	c := &checker{opts: opts, report: &Report{}, files: map[string]*mdFile{}, mirrored: map[string]bool{}, usedVerified: map[string]bool{}}
	if len(c.opts.Markdown) == 0 {
		found, err := DefaultMarkdown(opts.Root)
		if err != nil {
			return nil, err
		}
		c.opts.Markdown = found
	}
	var err error
	if c.testFuncs, err = testFuncs(opts.Root); err != nil {
		return nil, err
	}
	if c.makeTargets, c.ciTargets, err = makeTargets(opts.Root); err != nil {
		return nil, err
	}
	for _, name := range c.opts.Markdown {
		md, err := c.load(name)
		if err != nil {
			return nil, err
		}
		c.checkReferences(name, md.text)
		c.checkTestNames(name, md.text)
		if err := c.checkIdentifiers(name, md.text); err != nil {
			return nil, err
		}
		c.checkBlocks(name, md)
		c.checkLinks(name, md)
	}
	for _, name := range opts.Prose {
		b, err := os.ReadFile(filepath.Join(opts.Root, name))
		if err != nil {
			return nil, err
		}
		c.checkReferences(name, string(b))
		c.checkTestNames(name, string(b))
		if mirror, ok := opts.GoDocMirrors[name]; ok {
			c.checkGoDocBlocks(name, string(b), mirror)
		}
	}
	for f := range c.mirrored {
		c.report.Mirrored = append(c.report.Mirrored, f)
	}
	sort.Strings(c.report.Mirrored)
	for cmd := range opts.Verified {
		if !c.usedVerified[cmd] {
			c.report.UnusedVerified = append(c.report.UnusedVerified, cmd)
		}
	}
	sort.Strings(c.report.UnusedVerified)
	return c.report, nil
}

// DefaultMarkdown returns README.md and the .md files under docs/, relative
// to root.
func DefaultMarkdown(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return files, nil
}

type checker struct {
	opts         Options
	report       *Report
	files        map[string]*mdFile
	mirrored     map[string]bool
	testFuncs    map[string]bool
	makeTargets  map[string]bool
	ciTargets    map[string]bool
	cliCache     map[string]cliAnswer
	pkgNames     map[string]map[string]bool // package dir -> exported names; "Type.Name" for methods and fields, "Type.type" when they are all known
	usedVerified map[string]bool
}

type cliAnswer struct {
	flags map[string]bool
	ok    bool
}

func (c *checker) problem(file string, line int, format string, args ...any) {
	c.report.Problems = append(c.report.Problems, Problem{file, line, fmt.Sprintf(format, args...)})
}

// mdFile is a Markdown file split into prose and fenced blocks.
type mdFile struct {
	text    string
	prose   string // the text with fenced blocks blanked (newlines kept)
	blocks  []block
	anchors map[string]bool
}

type block struct {
	info  string // the info string: "go mirror=...", "sh", ...
	line  int    // line of the opening fence
	lines []string
}

func (b block) lang() string {
	f := strings.Fields(b.info)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func (b block) attr(key string) (string, bool) {
	for _, f := range strings.Fields(b.info)[1:] {
		k, v, _ := strings.Cut(f, "=")
		if k == key {
			return v, true
		}
	}
	return "", false
}

var fenceRE = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*(.*)$")

func (c *checker) load(name string) (*mdFile, error) {
	if md, ok := c.files[name]; ok {
		return md, nil
	}
	b, err := os.ReadFile(filepath.Join(c.opts.Root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	md := parseMarkdown(string(b))
	c.files[name] = md
	return md, nil
}

func parseMarkdown(text string) *mdFile {
	md := &mdFile{text: text}
	lines := strings.Split(text, "\n")
	prose := make([]string, len(lines))
	var cur *block
	var fence string
	for i, l := range lines {
		if cur != nil {
			if strings.HasPrefix(strings.TrimLeft(l, " "), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), fence[:1])) == "" {
				md.blocks = append(md.blocks, *cur)
				cur = nil
				continue
			}
			cur.lines = append(cur.lines, l)
			continue
		}
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			fence = m[1]
			cur = &block{info: strings.TrimSpace(m[2]), line: i + 1}
			continue
		}
		prose[i] = l
	}
	if cur != nil {
		md.blocks = append(md.blocks, *cur)
	}
	md.prose = strings.Join(prose, "\n")
	md.anchors = headingAnchors(prose)
	return md
}

var headingRE = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// headingAnchors returns the ids GitHub gives the headings.
func headingAnchors(prose []string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Slug is GitHub's id for a heading: lower case, punctuation other than
// hyphens and underscores dropped, spaces turned into hyphens. Link syntax
// in the heading keeps only its text.
func Slug(heading string) string {
	heading = linkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// References to outside the repository.
var outside = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`SEMANTICS\.md`), "SEMANTICS.md is not in the repository"},
	{regexp.MustCompile(`DESIGN\.md`), "DESIGN.md is not in the repository"},
	{regexp.MustCompile(`(?i)\bissues?\s+#?\d+`), "an issue number means nothing to a reader of the repository"},
	{regexp.MustCompile(`(?i)\bseeds?\s+#?\d+`), "a seed number means nothing to a reader of the repository"},
	{regexp.MustCompile(`\.\./shared\b`), "../shared is outside the repository"},
	{regexp.MustCompile(`/work/`), "/work/ is a path of the machine the docs were written on"},
}

func (c *checker) checkReferences(name, text string) {
	for _, o := range outside {
		for _, loc := range o.re.FindAllStringIndex(text, -1) {
			c.problem(name, lineOf(text, loc[0]), "%q: %s", text[loc[0]:loc[1]], o.what)
		}
	}
	if i := strings.Index(text, "REGARDS"); i >= 0 && !strings.Contains(text, "CNES REGARDS") {
		c.problem(name, lineOf(text, i), `"REGARDS" is never said to be the CNES REGARDS jobs module in this file`)
	}
}

var testNameRE = regexp.MustCompile("`((?:Test|Example|Benchmark|Fuzz)[A-Za-z0-9_]*)`")

func (c *checker) checkTestNames(name, text string) {
	for _, m := range testNameRE.FindAllStringSubmatchIndex(text, -1) {
		fn := text[m[2]:m[3]]
		if fn == "Test" || fn == "Example" || !c.isTestName(fn) {
			continue
		}
		if !c.testFuncs[fn] {
			c.problem(name, lineOf(text, m[0]), "%s: no such function in a _test.go file", fn)
		}
	}
}

// isTestName reports whether fn looks like a test function's name rather
// than another identifier that starts alike (TestDatabaseURL is a River
// helper): it must be defined in a test file, or at least follow the
// convention of a capital after the prefix.
func (c *checker) isTestName(fn string) bool {
	for _, p := range []string{"Test", "Example", "Benchmark", "Fuzz"} {
		if rest, ok := strings.CutPrefix(fn, p); ok && rest != "" {
			return unicode.IsUpper(rune(rest[0])) || rest[0] == '_'
		}
	}
	return false
}

var linkRE = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
var codeSpanRE = regexp.MustCompile("`[^`]*`")

func (c *checker) checkLinks(name string, md *mdFile) {
	// Links inside code spans are not links: blank the spans, keeping
	// offsets.
	prose := codeSpanRE.ReplaceAllStringFunc(md.prose, func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return 'x'
		}, s)
	})
	for _, m := range linkRE.FindAllStringSubmatchIndex(prose, -1) {
		target := md.prose[m[4]:m[5]]
		line := lineOf(prose, m[0])
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		resolved := name
		if path != "" {
			resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), path)))
			if resolved == ".." || strings.HasPrefix(resolved, "../") || filepath.IsAbs(path) {
				c.problem(name, line, "link %q leaves the repository", target)
				continue
			}
			if _, err := os.Stat(filepath.Join(c.opts.Root, filepath.FromSlash(resolved))); err != nil {
				c.problem(name, line, "link %q: %s does not exist", target, resolved)
				continue
			}
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(resolved, ".md") {
			c.problem(name, line, "link %q: an anchor into %s, which is not Markdown", target, resolved)
			continue
		}
		to, err := c.load(resolved)
		if err != nil {
			c.problem(name, line, "link %q: %v", target, err)
			continue
		}
		if !to.anchors[anchor] {
			c.problem(name, line, "link %q: %s has no heading with id %q", target, resolved, anchor)
		}
	}
}

func (c *checker) checkBlocks(name string, md *mdFile) {
	for _, b := range md.blocks {
		switch b.lang() {
		case "go":
			c.checkGo(name, b)
		case "sh", "bash", "shell":
			for _, cmd := range shellCommands(b.lines, false) {
				c.checkCommand(name, b.line+1+cmd.line, cmd.text)
			}
		case "console":
			for _, cmd := range shellCommands(b.lines, true) {
				c.checkCommand(name, b.line+1+cmd.line, cmd.text)
			}
		}
	}
}

func (c *checker) checkGo(name string, b block) {
	if _, ok := b.attr("nocheck"); ok {
		c.report.Unchecked = append(c.report.Unchecked, Problem{name, b.line, "Go snippet marked nocheck"})
		return
	}
	target, ok := b.attr("mirror")
	if !ok {
		c.problem(name, b.line, "Go snippet names no file it mirrors (```go mirror=path/to/example_test.go[#Func])")
		return
	}
	file, fn, _ := strings.Cut(target, "#")
	src, err := os.ReadFile(filepath.Join(c.opts.Root, filepath.FromSlash(file)))
	if err != nil {
		c.problem(name, b.line, "Go snippet mirrors %s: %v", file, err)
		return
	}
	c.mirrored[file] = true
	source := strings.Split(string(src), "\n")
	if fn != "" {
		body, ok := funcLines(source, fn)
		if !ok {
			c.problem(name, b.line, "Go snippet mirrors %s#%s: no function %s in %s", file, fn, fn, file)
			return
		}
		source = body
	}
	if line, ok := matchSnippet(b.lines, source); !ok {
		c.problem(name, b.line, "Go snippet differs from %s from its line %d (%q): copy the code again", target, line+1, strings.TrimSpace(b.lines[line]))
	}
}

// checkGoDocBlocks checks the code blocks of the doc comments of a Go file
// (comment lines indented by a tab) against the file they mirror.
func (c *checker) checkGoDocBlocks(name, text, mirror string) {
	src, err := os.ReadFile(filepath.Join(c.opts.Root, filepath.FromSlash(mirror)))
	if err != nil {
		c.problem(name, 0, "doc comment code mirrors %s: %v", mirror, err)
		return
	}
	c.mirrored[mirror] = true
	source := strings.Split(string(src), "\n")
	var block []string
	start := 0
	flush := func() {
		if len(trimBlankEnds(block)) > 0 {
			if line, ok := matchSnippet(block, source); !ok {
				c.problem(name, start, "doc comment code differs from %s from its line %d (%q): copy the code again", mirror, line+1, strings.TrimSpace(block[line]))
			}
		}
		block = nil
	}
	for i, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "//\t"):
			if block == nil {
				start = i + 1
			}
			block = append(block, strings.TrimPrefix(l, "//\t"))
		case l == "//" && block != nil:
			block = append(block, "")
		default:
			flush()
		}
	}
	flush()
}

// funcLines returns the lines of the top-level function fn, from its doc
// comment's first line to its closing brace.
func funcLines(source []string, fn string) ([]string, bool) {
	start := -1
	for i, l := range source {
		if strings.HasPrefix(l, "func "+fn+"(") || strings.HasPrefix(l, "func "+fn+"[") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	for end := start; end < len(source); end++ {
		if source[end] == "}" {
			return source[start : end+1], true
		}
	}
	return nil, false
}

// matchSnippet reports whether snippet appears in source as one contiguous
// run of lines (compared without their leading and trailing blanks), a
// snippet line "// ..." matching any number of source lines. When it does
// not, it returns the index of the snippet line where the best attempt
// failed.
func matchSnippet(snippet, source []string) (int, bool) {
	snip := trimBlankEnds(snippet)
	if len(snip) == 0 {
		return 0, true
	}
	best := 0
	for start := range source {
		if n, ok := matchAt(snip, source, start); ok {
			return 0, true
		} else if n > best {
			best = n
		}
	}
	if best >= len(snip) {
		best = len(snip) - 1
	}
	return best + firstNonBlank(snippet), false
}

// matchAt matches snip against source from line start; it returns how many
// snippet lines matched.
func matchAt(snip, source []string, start int) (int, bool) {
	i, j := 0, start
	for i < len(snip) {
		s := strings.TrimSpace(snip[i])
		if s == "// ..." {
			if i == len(snip)-1 {
				return i + 1, true
			}
			for k := j; k <= len(source); k++ {
				if n, ok := matchAt(snip[i+1:], source, k); ok {
					return i + 1 + n, true
				}
			}
			return i, false
		}
		if j >= len(source) || s != strings.TrimSpace(source[j]) {
			return i, false
		}
		i++
		j++
	}
	return i, true
}

func trimBlankEnds(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func firstNonBlank(lines []string) int {
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			return i
		}
	}
	return 0
}

type command struct {
	line int // index in the block
	text string
}

// shellCommands returns the commands of a block: every line of a sh block
// that is not blank or a comment (continuation lines joined), or the lines
// of a console block that start with "$ ".
func shellCommands(lines []string, console bool) []command {
	var cmds []command
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if console {
			var ok bool
			if l, ok = strings.CutPrefix(l, "$ "); !ok {
				continue
			}
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		start := i
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		cmds = append(cmds, command{start, l})
	}
	return cmds
}

// splitCommand splits a command line at ;, &&, || and | outside quotes, and
// drops a trailing comment.
func splitCommand(line string) []string {
	var parts []string
	var cur strings.Builder
	var quote rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == '#' && (i == 0 || rs[i-1] == ' '):
			i = len(rs)
		case r == ';' || r == '|' || (r == '&' && i+1 < len(rs) && rs[i+1] == '&'):
			if i+1 < len(rs) && (rs[i+1] == '|' || rs[i+1] == '&') {
				i++
			}
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	parts = append(parts, strings.TrimSpace(cur.String()))
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

var envAssignRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)

func (c *checker) checkCommand(name string, line int, text string) {
	if reason, ok := c.opts.Verified[text]; ok && reason != "" {
		c.usedVerified[text] = true
		return
	}
	for _, part := range splitCommand(text) {
		words := strings.Fields(part)
		for len(words) > 0 && envAssignRE.MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "echo":
		case "riverbpmn":
			c.checkCLI(name, line, words[1:])
		case "make":
			c.checkMake(name, line, words[1:])
		case "go":
			if len(words) > 1 && words[1] == "test" {
				c.checkGoTest(name, line, words[2:])
				continue
			}
			c.problem(name, line, "command %q is not run by a test: list it in the checker's Verified commands with the reason, or drop it", text)
			return
		default:
			c.problem(name, line, "command %q is not run by a test: list it in the checker's Verified commands with the reason, or drop it", text)
			return
		}
	}
}

func (c *checker) cli(verb string) cliAnswer {
	if c.cliCache == nil {
		c.cliCache = map[string]cliAnswer{}
	}
	if a, ok := c.cliCache[verb]; ok {
		return a
	}
	var a cliAnswer
	if c.opts.CLI != nil {
		a.flags, a.ok = c.opts.CLI(verb)
	}
	c.cliCache[verb] = a
	return a
}

// cleanWord drops the brackets and bars of a usage line ("[--schema", "S]").
func cleanWord(w string) string {
	return strings.Trim(w, "[]()|")
}

// maxPathWords is the most words a riverbpmn command's path has (noun,
// sub-noun, verb: exclusive locks list).
const maxPathWords = 3

func (c *checker) checkCLI(name string, line int, args []string) {
	// The command's path: its leading words (`jobs list`, `exclusive locks
	// delete-stale`), the longest the CLI knows; the words after it are its
	// arguments.
	var words []string
	for _, w := range args {
		w = cleanWord(w)
		if w == "" {
			continue
		}
		if strings.HasPrefix(w, "-") || len(words) == maxPathWords {
			break
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		c.problem(name, line, "riverbpmn command without a verb")
		return
	}
	verb := words[0]
	a := c.cli(verb)
	for n := len(words); n > 1; n-- {
		if longer := c.cli(strings.Join(words[:n], " ")); longer.ok {
			verb, a = strings.Join(words[:n], " "), longer
			break
		}
	}
	if !a.ok {
		c.problem(name, line, "riverbpmn %s: no such verb", verb)
		return
	}
	for _, w := range args {
		w = cleanWord(w)
		if !strings.HasPrefix(w, "-") || len(w) < 2 || isNumber(w) {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !a.flags[flag] {
			c.problem(name, line, "riverbpmn %s: no flag --%s", verb, flag)
		}
	}
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

func (c *checker) checkMake(name string, line int, args []string) {
	for _, t := range args {
		if strings.Contains(t, "=") {
			continue
		}
		if !c.makeTargets[t] {
			c.problem(name, line, "make %s: no such target in the Makefile", t)
			continue
		}
		if !c.ciTargets[t] && c.opts.MakeTargets[t] == "" {
			c.problem(name, line, "make %s: CI (.ci/run) does not run it and the checker's MakeTargets does not say what verifies it", t)
		}
	}
}

func (c *checker) checkGoTest(name string, line int, args []string) {
	var run string
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-run" && i+1 < len(args):
			i++
			run = strings.Trim(args[i], `'"`)
		case strings.HasPrefix(a, "-run="):
			run = strings.Trim(strings.TrimPrefix(a, "-run="), `'"`)
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		}
	}
	if len(pkgs) == 0 {
		c.problem(name, line, "go test command names no package (./...)")
		return
	}
	var re *regexp.Regexp
	if run != "" {
		var err error
		if re, err = regexp.Compile(run); err != nil {
			c.problem(name, line, "go test -run %q: %v", run, err)
			return
		}
	}
	for _, p := range pkgs {
		if strings.HasSuffix(p, "/...") {
			continue
		}
		dir := filepath.Join(c.opts.Root, filepath.FromSlash(p))
		funcs, err := testFuncsIn(dir)
		if err != nil {
			c.problem(name, line, "go test %s: %v", p, err)
			continue
		}
		if re == nil {
			continue
		}
		found := false
		for f := range funcs {
			if strings.HasPrefix(f, "Test") && re.MatchString(f) {
				found = true
				break
			}
		}
		if !found {
			c.problem(name, line, "go test -run %q %s: matches no test", run, p)
		}
	}
}

var testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Example|Benchmark|Fuzz)\w*)\(`)

// testFuncs returns the test, example, benchmark and fuzz functions of every
// _test.go file under root (testdata excluded).
func testFuncs(root string) (map[string]bool, error) {
	funcs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return addTestFuncs(path, funcs)
	})
	return funcs, err
}

func testFuncsIn(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	funcs := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), "_test.go") {
			if err := addTestFuncs(filepath.Join(dir, e.Name()), funcs); err != nil {
				return nil, err
			}
		}
	}
	return funcs, nil
}

func addTestFuncs(path string, funcs map[string]bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, m := range testFuncRE.FindAllStringSubmatch(string(b), -1) {
		funcs[m[1]] = true
	}
	return nil
}

var makeTargetRE = regexp.MustCompile(`^([A-Za-z0-9_-]+):`)
var ciMakeRE = regexp.MustCompile(`(?m)^\s*make\s+([^#\n]*)`)

// makeTargets returns the Makefile's targets and the ones .ci/run makes.
func makeTargets(root string) (all, ci map[string]bool, err error) {
	all, ci = map[string]bool{}, map[string]bool{}
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := makeTargetRE.FindStringSubmatch(s.Text()); m != nil && !strings.HasPrefix(s.Text(), m[1]+":=") {
			all[m[1]] = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, nil, err
	}
	run, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, err
	}
	for _, m := range ciMakeRE.FindAllStringSubmatch(string(run), -1) {
		for _, t := range strings.Fields(m[1]) {
			ci[t] = true
		}
	}
	return all, ci, nil
}

func lineOf(text string, offset int) int {
	return strings.Count(text[:offset], "\n") + 1
}

var identRE = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Z][A-Za-z0-9_]*))?")

// checkIdentifiers checks the backticked Go names of text.
func (c *checker) checkIdentifiers(name, text string) error {
	for _, m := range identRE.FindAllStringSubmatchIndex(text, -1) {
		pkg, ident := text[m[2]:m[3]], text[m[4]:m[5]]
		method := ""
		if m[6] >= 0 {
			method = text[m[6]:m[7]]
		}
		if pkg == "engine" {
			pkg, ident, method = "workflow", "Engine", ident
		}
		if c.isTestName(ident) && method == "" && c.testFuncs[ident] {
			continue // a test of that package, named with it
		}
		names, err := c.packageNames(pkg)
		if err != nil {
			return err
		}
		if names == nil {
			continue // not a package of the repository
		}
		switch {
		case !names[ident]:
			c.problem(name, lineOf(text, m[0]), "%s.%s: package %s has no exported %s", pkg, ident, pkg, ident)
		case method != "" && names[ident+".type"] && !names[ident+"."+method]:
			c.problem(name, lineOf(text, m[0]), "%s.%s.%s: %s has no method or field %s", pkg, ident, method, ident, method)
		}
	}
	return nil
}

// packageNames returns the exported top-level names of the package in
// directory dir of the repository (nil when there is none), with
// "Type.type" for each type and "Type.Name" for its methods and fields.
func (c *checker) packageNames(dir string) (map[string]bool, error) {
	if c.pkgNames == nil {
		c.pkgNames = map[string]map[string]bool{}
	}
	if names, ok := c.pkgNames[dir]; ok {
		return names, nil
	}
	entries, err := os.ReadDir(filepath.Join(c.opts.Root, dir))
	if os.IsNotExist(err) {
		c.pkgNames[dir] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names map[string]bool
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(c.opts.Root, dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if names == nil {
			names = map[string]bool{}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				t := d.Recv.List[0].Type
				if star, ok := t.(*ast.StarExpr); ok {
					t = star.X
				}
				if idx, ok := t.(*ast.IndexExpr); ok {
					t = idx.X
				}
				if id, ok := t.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						names[spec.Name.Name] = true
						// Methods and fields are checked only on a struct or
						// interface that embeds nothing: another type's
						// methods may be promoted or come with an alias.
						strict := isStructOrInterface(spec.Type)
						var fields []*ast.Field
						switch t := spec.Type.(type) {
						case *ast.StructType:
							fields = t.Fields.List
						case *ast.InterfaceType:
							fields = t.Methods.List
						}
						for _, f := range fields {
							if len(f.Names) == 0 {
								strict = false
							}
							for _, n := range f.Names {
								names[spec.Name.Name+"."+n.Name] = true
							}
						}
						if strict {
							names[spec.Name.Name+".type"] = true
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	c.pkgNames[dir] = names
	return names, nil
}

func isStructOrInterface(e ast.Expr) bool {
	switch e.(type) {
	case *ast.StructType, *ast.InterfaceType:
		return true
	}
	return false
}
