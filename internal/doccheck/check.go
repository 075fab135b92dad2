package doccheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Problem is one citation that does not resolve.
type Problem struct {
	// Pos is where the citation is (the start of its comment for Go files).
	Pos token.Position
	// Cited is the text cited, as written: a doc link with its brackets, a
	// dotted name, a Markdown code span with its backquotes.
	Cited string
	// Why says what is missing.
	Why string
}

// String returns "file:line: cited: why", with the file relative to the
// working directory's module when possible.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.Pos.Filename, p.Pos.Line, p.Cited, p.Why)
}

var (
	// docLink matches a doc link: a name, optionally starred, qualified by
	// a package name or import path, and followed by a method or field.
	docLink = regexp.MustCompile(`\[(\*?)((?:[\w.\-]+/)*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,2})\]`)
	// linkDef matches a doc comment's link definition line.
	linkDef = regexp.MustCompile(`^\s*\[([^\]]+)\]:\s*\S`)
	// dotted matches a qualified name in prose: a.B, a.B.C.
	dotted = regexp.MustCompile(`[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+`)
)

// fileExt are second parts that make a dotted word a file or host name.
var fileExt = map[string]bool{
	"md": true, "go": true, "json": true, "yaml": true, "yml": true, "txt": true, "mod": true,
	"sum": true, "com": true, "org": true, "net": true, "io": true, "test": true, "example": true,
	"conf": true, "zone": true, "sh": true, "proto": true, "html": true, "pem": true, "key": true,
}

// Check resolves every citation in the doc comments of the set's packages
// and reports those that do not resolve, sorted by position.
func (s *Set) Check() []Problem {
	var out []Problem
	for _, p := range s.Packages {
		for _, f := range p.Files {
			c := &citer{s: s, p: p, imports: fileImports(f)}
			for _, d := range docComments(f) {
				c.ctx = nil
				if obj, ok := p.Types.Scope().Lookup(d.typ).(*types.TypeName); ok {
					c.ctx = obj
				}
				out = append(out, c.comment(d.cg)...)
			}
			out = append(out, c.surface(f)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line
	})
	return out
}

// fileImports maps a file's import names to their paths.
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, is := range f.Imports {
		path, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		m[name] = path
	}
	return m
}

// docComment is one doc comment and the type it documents (or whose
// field or method it documents), "" for none.
type docComment struct {
	cg  *ast.CommentGroup
	typ string
}

// docComments returns the comments godoc shows: the package doc and the
// docs of declarations, specs, struct fields and interface methods.
func docComments(f *ast.File) []docComment {
	var out []docComment
	typ := ""
	add := func(cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				out = append(out, docComment{cg, typ})
			}
		}
	}
	add(f.Doc)
	for _, d := range f.Decls {
		typ = ""
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) == 1 {
				typ = recvName(d.Recv.List[0].Type)
			}
			add(d.Doc)
		case *ast.GenDecl:
			if len(d.Specs) == 1 {
				if ts, ok := d.Specs[0].(*ast.TypeSpec); ok {
					typ = ts.Name.Name
				}
			}
			add(d.Doc)
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					typ = sp.Name.Name
					add(sp.Doc, sp.Comment)
					ast.Inspect(sp.Type, func(n ast.Node) bool {
						if fl, ok := n.(*ast.Field); ok {
							add(fl.Doc, fl.Comment)
						}
						return true
					})
				case *ast.ValueSpec:
					add(sp.Doc, sp.Comment)
				}
			}
		}
	}
	return out
}

// recvName returns the type name of a method's receiver.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// citer resolves citations in one file.
type citer struct {
	s       *Set
	p       *Package
	imports map[string]string
	ctx     *types.TypeName // the type the comment documents, or nil
}

// comment checks one comment group.
func (c *citer) comment(cg *ast.CommentGroup) []Problem {
	text := cg.Text()
	pos := c.s.Fset.Position(cg.Pos())
	defs := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if m := linkDef.FindStringSubmatch(line); m != nil {
			defs[m[1]] = true
		}
	}
	var out []Problem
	for i, line := range strings.Split(text, "\n") {
		lp := pos
		lp.Line += i
		if linkDef.MatchString(line) {
			continue
		}
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") {
			continue // a code block: an illustration, not a citation
		}
		{
			for _, m := range docLink.FindAllStringSubmatchIndex(line, -1) {
				if !linkBoundary(line, m[0], m[1]) {
					continue
				}
				name := line[m[4]:m[5]]
				if defs[name] {
					continue
				}
				if why := c.docLink(name); why != "" {
					out = append(out, Problem{Pos: lp, Cited: line[m[0]:m[1]], Why: why})
				}
			}
		}
		for _, m := range dotted.FindAllStringIndex(line, -1) {
			if !wordBoundary(line, m[0], m[1]) {
				continue
			}
			word := line[m[0]:m[1]]
			why := c.prose(word)
			if why != "" && strings.HasSuffix(word, "s") && c.prose(strings.TrimSuffix(word, "s")) == "" {
				why = "" // a plural: *probe.FieldErrors
			}
			if why != "" {
				out = append(out, Problem{Pos: lp, Cited: word, Why: why})
			}
		}
	}
	return out
}

// linkBoundary reports whether the brackets at line[i:j] can be a doc link:
// not an index or a type such as map[string]int or [4]byte.
func linkBoundary(line string, i, j int) bool {
	if i > 0 {
		r := rune(line[i-1])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == ']' || r == ')' {
			return false
		}
	}
	if j < len(line) {
		r := rune(line[j])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '(' || r == '[' || r == '*' {
			return false
		}
	}
	return true
}

// wordBoundary reports whether line[i:j] is a whole dotted word: not part
// of a path, a URL, a host name or a longer chain.
func wordBoundary(line string, i, j int) bool {
	if i > 0 {
		switch r := rune(line[i-1]); {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-@:$%<{[", r):
			return false
		}
	}
	if j < len(line) {
		switch r := rune(line[j]); {
		case strings.ContainsRune("/-@>}:", r):
			return false
		case r == '.' && j+1 < len(line) && (unicode.IsLetter(rune(line[j+1])) || unicode.IsDigit(rune(line[j+1]))):
			return false
		}
	}
	return true
}

// docLink resolves the text of a doc link; it returns why it does not
// resolve, or "".
func (c *citer) docLink(name string) string {
	if k := strings.LastIndex(name, "/"); k >= 0 {
		// [import/path.Name...]: the path runs to the first dot after the last slash.
		rest := name[k+1:]
		d := strings.Index(rest, ".")
		if d < 0 {
			return "" // a package link [path]: not checked
		}
		path := name[:k+1] + rest[:d]
		tp := c.s.pkg(path)
		if tp == nil {
			return "no package " + path + " in the module's graph"
		}
		return member(tp.Scope().Lookup(strings.Split(rest[d+1:], ".")[0]), strings.Split(rest[d+1:], ".")[1:], rest[d+1:], path)
	}
	parts := strings.Split(name, ".")
	if obj := c.p.Types.Scope().Lookup(parts[0]); obj != nil {
		return member(obj, parts[1:], name, c.p.Path)
	}
	if len(parts) == 1 {
		if !ast.IsExported(parts[0]) {
			return "" // [i], [v6]: brackets in prose; go doc links no unexported name
		}
		if types.Universe.Lookup(parts[0]) != nil {
			return ""
		}
		if c.imports[parts[0]] != "" || len(c.s.byName[parts[0]]) > 0 {
			return "" // [pkg]: a package link
		}
		return "no " + parts[0] + " in package " + c.p.Types.Name()
	}
	return c.qualified(parts, name, true)
}

// qualified resolves pkg.Name[.Member]; strict reports a first part that
// names no package.
func (c *citer) qualified(parts []string, name string, strict bool) string {
	var cands []*types.Package
	if path, ok := c.imports[parts[0]]; ok {
		if tp := c.s.pkg(path); tp != nil {
			cands = append(cands, tp)
		}
	} else {
		cands = c.s.packagesNamed(parts[0])
	}
	if len(cands) == 0 {
		if strict {
			return "no package or name " + parts[0]
		}
		return ""
	}
	why := ""
	for _, tp := range cands {
		w := member(tp.Scope().Lookup(parts[1]), parts[2:], strings.Join(parts[1:], "."), tp.Path())
		if w == "" {
			return ""
		}
		why = w
	}
	return why
}

// prose resolves a dotted word of prose; it returns why it does not
// resolve, or "" (also for words that are not Go names).
func (c *citer) prose(word string) string {
	parts := strings.Split(word, ".")
	if len(parts) > 3 || fileExt[strings.ToLower(parts[len(parts)-1])] {
		return ""
	}
	if obj := c.p.Types.Scope().Lookup(parts[0]); obj != nil {
		if _, ok := obj.(*types.TypeName); !ok && !ast.IsExported(parts[0]) {
			return "" // a lower-case word that happens to name a function or variable
		}
		return member(obj, parts[1:], word, c.p.Path)
	}
	if c.ctx != nil && ast.IsExported(parts[0]) {
		// A path from the documented type: Auth.Secret in a config's doc.
		if f, _, _ := types.LookupFieldOrMethod(c.ctx.Type(), true, c.p.Types, parts[0]); f != nil {
			return member(f, parts[1:], word, c.ctx.Name())
		}
	}
	if !ast.IsExported(parts[1]) {
		return "" // pkg.unexported is no citation a reader could follow
	}
	if ast.IsExported(parts[0]) {
		if allCaps(parts[0]) {
			return ""
		}
		if c.imports[parts[0]] == "" && len(c.s.byName[parts[0]]) == 0 {
			return "no " + parts[0] + " in package " + c.p.Types.Name()
		}
	}
	return c.qualified(parts, word, false)
}

// allCaps reports whether s is an acronym such as RFC or README.
func allCaps(s string) bool {
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// member resolves rest (fields or methods) from obj; name is the cited
// text and where the package it was looked up in.
func member(obj types.Object, rest []string, name, where string) string {
	if obj == nil {
		first := strings.Split(name, ".")[0]
		return "no " + first + " in " + where
	}
	t := obj.Type()
	for _, sel := range rest {
		if fn, isFunc := obj.(*types.Func); isFunc {
			// Status.FromDisk: a field of what the method returns.
			sig := fn.Type().(*types.Signature)
			if sig.Results().Len() == 0 {
				return fmt.Sprintf("%s returns nothing; it has no %s", fn.Name(), sel)
			}
			t = sig.Results().At(0).Type()
		}
		if _, isConst := obj.(*types.Const); isConst {
			return "a constant has no " + sel
		}
		found, _, _ := types.LookupFieldOrMethod(t, true, obj.Pkg(), sel)
		if found == nil {
			return fmt.Sprintf("%s has no field or method %s", typeName(t), sel)
		}
		obj, t = found, found.Type()
	}
	return ""
}

// typeName returns t's name without its package path.
func typeName(t types.Type) string {
	return types.TypeString(t, func(*types.Package) string { return "" })
}

// surface reports exported declarations that show an unexported constant
// or variable: go doc prints the name, and no reader can look it up.
func (c *citer) surface(f *ast.File) []Problem {
	var out []Problem
	check := func(name string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := c.p.Info.Uses[id]
			if obj == nil || obj.Exported() || obj.Pkg() != c.p.Types || obj.Parent() != c.p.Types.Scope() {
				return true
			}
			switch obj.(type) {
			case *types.Const, *types.Var:
				out = append(out, Problem{Pos: c.s.Fset.Position(id.Pos()), Cited: name, Why: "shows unexported " + id.Name})
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				check(d.Name.Name, d.Type)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					check(ts.Name.Name, ts.Type)
					continue
				}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						if n.IsExported() {
							check(ts.Name.Name+"."+n.Name, fl.Type)
						}
					}
				}
			}
		}
	}
	return out
}
