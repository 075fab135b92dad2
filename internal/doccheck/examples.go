package doccheck

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
)

// CheckExamples reports every Example in an external test file (package
// x_test) that godoc and pkgsite cannot show as a complete program: one
// that uses a helper declared in another file, so a reader of the docs
// sees a call to code they cannot see. Keep an Example and what it uses in
// one file; a file with one Example, its helpers and no tests is shown
// whole.
func (s *Set) CheckExamples() ([]Problem, error) {
	var out []Problem
	for _, p := range s.Packages {
		if len(p.XTestFiles) == 0 {
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.XTestFiles {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("doccheck: %w", err)
			}
			files = append(files, f)
		}
		for _, ex := range doc.Examples(files...) {
			if ex.Play != nil {
				continue
			}
			name := "Example"
			if ex.Name != "" {
				name += "_" + ex.Name
			}
			out = append(out, Problem{
				Pos:   fset.Position(ex.Code.Pos()),
				Cited: name,
				Why:   "godoc cannot show it as a program: it uses a name declared in another file",
			})
		}
	}
	return out, nil
}
