package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	// codeSpan matches an inline `code span`.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// goName matches a whole span that is a Go name, optionally starred,
	// qualified, followed by a field or method, or called with no arguments.
	goName = regexp.MustCompile(`^\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,2})(?:\(\))?$`)
)

// CheckMarkdown checks a Markdown file: every ```go block must type-check
// against the set's packages and their dependencies, and every code span
// naming a Go identifier must resolve (a package-qualified one in that
// package, a bare exported one in some package of the set).
func (s *Set) CheckMarkdown(path string) ([]Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	var out []Problem
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			out = append(out, s.spans(path, i+1, lines[i])...)
			continue
		}
		lang := strings.TrimPrefix(fence, "```")
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		if lang == "go" {
			out = append(out, s.block(path, start, strings.Join(lines[start:min(i, len(lines))], "\n"))...)
		}
	}
	return out, nil
}

// spans checks the code spans of one line of prose.
func (s *Set) spans(path string, line int, text string) []Problem {
	var out []Problem
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		g := goName.FindStringSubmatch(m[1])
		if g == nil {
			continue
		}
		if why := s.anywhere(g[1]); why != "" {
			out = append(out, Problem{Pos: token.Position{Filename: path, Line: line}, Cited: m[0], Why: why})
		}
	}
	return out
}

// anywhere resolves a name cited outside any package: pkg.Name[.Member]
// against the packages of that name, Name[.Member] against every package of
// the set. Lower-case bare words and acronyms are not Go citations.
func (s *Set) anywhere(name string) string {
	parts := strings.Split(name, ".")
	if fileExt[strings.ToLower(parts[len(parts)-1])] && len(parts) > 1 {
		return ""
	}
	first := parts[0]
	if !ast.IsExported(first) {
		if len(parts) == 1 || !ast.IsExported(parts[1]) {
			return ""
		}
		cands := s.packagesNamed(first)
		if len(cands) == 0 {
			return ""
		}
		why := ""
		for _, tp := range cands {
			if why = member(tp.Scope().Lookup(parts[1]), parts[2:], strings.Join(parts[1:], "."), tp.Path()); why == "" {
				return ""
			}
		}
		return why
	}
	if allCaps(first) || len(parts) == 1 && !strings.ContainsFunc(first[1:], func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		return "" // HTTP, README, or a capitalised English word
	}
	for _, p := range []string{"Example", "Test", "Benchmark", "Fuzz"} {
		if strings.HasPrefix(first, p) {
			return "" // test functions are not in the loaded files
		}
	}
	why := "no " + first + " in any package of the module"
	for _, p := range s.Packages {
		scope := p.Types.Scope()
		if obj := scope.Lookup(first); obj != nil {
			if why = member(obj, parts[1:], name, p.Path); why == "" {
				return ""
			}
		}
		if len(parts) > 1 {
			continue
		}
		for _, n := range scope.Names() { // a bare field or method name
			if tn, ok := scope.Lookup(n).(*types.TypeName); ok && tn.Exported() {
				if f, _, _ := types.LookupFieldOrMethod(tn.Type(), true, p.Types, first); f != nil && f.Exported() {
					return ""
				}
			}
		}
	}
	return why
}

// block type-checks one ```go block. A block with a package clause is a
// file; any other is the body of a function, with the imports its
// selectors name (the set's packages first, then the standard library's).
func (s *Set) block(path string, line int, src string) []Problem {
	fset := token.NewFileSet()
	prefix := 0
	if !strings.HasPrefix(strings.TrimSpace(src), "package ") {
		body, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+src+"\n}\n", 0)
		if err != nil {
			return []Problem{{Pos: token.Position{Filename: path, Line: line}, Cited: "```go block", Why: err.Error()}}
		}
		imports := s.inferImports(body)
		src = "package p\n" + imports + "func _() {\n" + src + "\n}\n"
		prefix = 2 + strings.Count(imports, "\n")
	}
	fset = token.NewFileSet()
	f, err := parser.ParseFile(fset, "block.go", src, 0)
	if err != nil {
		return []Problem{{Pos: token.Position{Filename: path, Line: line}, Cited: "```go block", Why: err.Error()}}
	}
	var out []Problem
	conf := types.Config{Importer: importerFunc(func(p string) (*types.Package, error) {
		if tp := s.pkg(p); tp != nil {
			return tp, nil
		}
		return nil, fmt.Errorf("no package %s in the module's graph", p)
	}), Error: func(err error) {
		te, ok := err.(types.Error)
		if !ok {
			return
		}
		pos := te.Fset.Position(te.Pos)
		out = append(out, Problem{Pos: token.Position{Filename: path, Line: line + pos.Line - 1 - prefix}, Cited: "```go block", Why: te.Msg})
	}}
	_, _ = conf.Check("p", fset, []*ast.File{f}, nil)
	return out
}

// inferImports returns an import declaration for every unresolved
// identifier x of f used as x.Sel that names a package.
func (s *Set) inferImports(f *ast.File) string {
	want := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || id.Obj != nil || want[id.Name] != "" {
			return true
		}
		paths := s.byName[id.Name]
		best := ""
		for _, p := range paths {
			switch {
			case s.local[p]:
				best = p // the module's own package wins
			case best == "" || !s.local[best] && len(p) < len(best):
				best = p
			}
		}
		if best != "" {
			want[id.Name] = best
		}
		return true
	})
	if len(want) == 0 {
		return ""
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "import %s %s\n", n, strconv.Quote(want[n]))
	}
	return b.String()
}

// importerFunc adapts a function to types.Importer.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
