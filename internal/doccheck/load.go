package doccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Package is one package of the set, type-checked from source.
type Package struct {
	// Path is the import path.
	Path string
	// Dir is the directory holding the files.
	Dir string
	// Files are the parsed non-test Go files, with comments.
	Files []*ast.File
	// XTestFiles are the paths of the external test files (package x_test),
	// where godoc finds the Examples it can show as programs.
	XTestFiles []string
	// Types and Info are the type checker's results.
	Types *types.Package
	Info  *types.Info
}

// Set is the packages Load type-checked and everything they import.
type Set struct {
	// Fset positions every file of Packages.
	Fset *token.FileSet
	// Packages are the packages named by Load's patterns, by import path.
	Packages []*Package

	dir    string
	imp    types.Importer
	byName map[string][]string // package name -> import paths in the graph
	local  map[string]bool     // import paths of Packages
}

type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	XTestFiles []string `json:"XTestGoFiles"`
	Export     string
	Standard   bool
	DepOnly    bool
	Error      *struct{ Err string }
}

// Load runs go list -export -deps in dir on patterns and type-checks the
// packages they match (their non-test files) against their dependencies'
// export data.
func Load(dir string, patterns ...string) (*Set, error) {
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Dir,GoFiles,XTestGoFiles,Export,Standard,DepOnly,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("doccheck: go list: %w\n%s", err, stderr.String())
	}
	s := &Set{Fset: token.NewFileSet(), dir: dir, byName: map[string][]string{}, local: map[string]bool{}}
	exports := map[string]string{}
	var targets []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("doccheck: go list output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("doccheck: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if p.Name != "" && p.Name != "main" && !(p.DepOnly && internalPath(p.ImportPath)) {
			// Another module's internal package is nothing a reader could
			// look up: a prose word such as client.Bits (a parameter's
			// method) must not resolve against it.
			s.byName[p.Name] = append(s.byName[p.Name], p.ImportPath)
		}
		if !p.DepOnly {
			targets = append(targets, p)
			s.local[p.ImportPath] = true
		}
	}
	s.imp = importer.ForCompiler(s.Fset, "gc", func(path string) (io.ReadCloser, error) {
		f := exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	sort.Slice(targets, func(i, j int) bool { return targets[i].ImportPath < targets[j].ImportPath })
	for _, t := range targets {
		p, err := s.check(t)
		if err != nil {
			return nil, err
		}
		s.Packages = append(s.Packages, p)
	}
	return s, nil
}

// check parses and type-checks one listed package.
func (s *Set) check(t listed) (*Package, error) {
	p := &Package{Path: t.ImportPath, Dir: t.Dir}
	for _, name := range t.XTestFiles {
		p.XTestFiles = append(p.XTestFiles, filepath.Join(t.Dir, name))
	}
	for _, name := range t.GoFiles {
		f, err := parser.ParseFile(s.Fset, filepath.Join(t.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("doccheck: %w", err)
		}
		p.Files = append(p.Files, f)
	}
	p.Info = &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: s.imp}
	tp, err := conf.Check(t.ImportPath, s.Fset, p.Files, p.Info)
	if err != nil {
		return nil, fmt.Errorf("doccheck: type-checking %s: %w", t.ImportPath, err)
	}
	p.Types = tp
	return p, nil
}

// internalPath reports whether path is an internal package (has an
// "internal" element), which only its own module may import.
func internalPath(path string) bool {
	return path == "internal" || strings.HasPrefix(path, "internal/") ||
		strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// packagesNamed returns the packages of the graph whose name is name,
// imported from export data (the set's own packages from their source).
func (s *Set) packagesNamed(name string) []*types.Package {
	var out []*types.Package
	for _, path := range s.byName[name] {
		if tp := s.pkg(path); tp != nil {
			out = append(out, tp)
		}
	}
	return out
}

// pkg returns the package at path, or nil.
func (s *Set) pkg(path string) *types.Package {
	for _, p := range s.Packages {
		if p.Path == path {
			return p.Types
		}
	}
	tp, err := s.imp.Import(path)
	if err != nil {
		return nil
	}
	return tp
}
