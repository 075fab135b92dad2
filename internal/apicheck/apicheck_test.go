package apicheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/gslbkit/gslb"

// exportData lists, for every package the module's packages depend on, the
// file holding its compiled export data (built by go list -export).
func exportData(t *testing.T) (map[string]string, []string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Standard}}", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	files := map[string]string{}
	var public []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			continue
		}
		path, file := parts[0], parts[1]
		files[path] = file
		if strings.HasPrefix(path, module+"/") && !isInternal(path) && !strings.Contains(path, "/examples/") && !strings.Contains(path, "/bench/") {
			public = append(public, path)
		}
	}
	sort.Strings(public)
	return files, public
}

func isInternal(path string) bool {
	return strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// TestNoInternalTypesInAPI fails when an exported function, method, field,
// variable, constant or type of a public package mentions a named type
// declared in one of the module's internal packages.
func TestNoInternalTypesInAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data for the whole module")
	}
	files, public := exportData(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := files[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var bad []string
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		bad = append(bad, leaks(pkg)...)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if len(public) == 0 {
		t.Fatal("no public packages found")
	}
	t.Logf("checked %d public packages", len(public))
}

// sharedFieldError is the one internal type public packages may re-export,
// by design: the module's single invalid-configuration error, which every
// package exports as its own FieldError (type FieldError = fielderr.Error)
// so that errors.As works from any of them. Its fields and methods are all
// of std types, and each alias's doc comment describes it.
const sharedFieldError = "github.com/gslbkit/gslb/internal/fielderr.Error"

// leaks reports every exported object of pkg whose type mentions an
// internal named type (aliases of sharedFieldError excepted).
func leaks(pkg *types.Package) []string {
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Path() + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				if n := internalIn(o.Type(), map[types.Type]bool{}); n != "" && n != sharedFieldError {
					out = append(out, fmt.Sprintf("%s is an alias of internal %s", where, n))
				}
				continue
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				continue
			}
			if n := exportedShape(named.Underlying()); n != "" {
				out = append(out, fmt.Sprintf("%s: %s", where, n))
			}
			for i := 0; i < named.NumMethods(); i++ {
				m := named.Method(i)
				if !m.Exported() {
					continue
				}
				if n := internalIn(m.Type(), map[types.Type]bool{}); n != "" {
					out = append(out, fmt.Sprintf("%s.%s mentions internal %s", where, m.Name(), n))
				}
			}
		default:
			if n := internalIn(obj.Type(), map[types.Type]bool{}); n != "" {
				out = append(out, fmt.Sprintf("%s mentions internal %s", where, n))
			}
		}
	}
	return out
}

// exportedShape checks the parts of a type's underlying structure a user
// sees: exported struct fields (embedded ones included), interface methods,
// and for other kinds the whole type.
func exportedShape(u types.Type) string {
	switch u := u.(type) {
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if n := internalIn(f.Type(), map[types.Type]bool{}); n != "" {
				return fmt.Sprintf("field %s mentions internal %s", f.Name(), n)
			}
		}
		return ""
	case *types.Interface:
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if n := internalIn(m.Type(), map[types.Type]bool{}); n != "" {
				return fmt.Sprintf("method %s mentions internal %s", m.Name(), n)
			}
		}
		return ""
	default:
		if n := internalIn(u, map[types.Type]bool{}); n != "" {
			return "underlying type mentions internal " + n
		}
		return ""
	}
}

// internalIn returns the name of the first internal named type found in t,
// or "".
func internalIn(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			return obj.Pkg().Path() + "." + obj.Name()
		}
		return internalIn(types.Unalias(t), seen)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			return obj.Pkg().Path() + "." + obj.Name()
		}
		if args := t.TypeArgs(); args != nil {
			for i := 0; i < args.Len(); i++ {
				if n := internalIn(args.At(i), seen); n != "" {
					return n
				}
			}
		}
		return "" // a public named type: its own API is checked where it is declared
	case *types.Pointer:
		return internalIn(t.Elem(), seen)
	case *types.Slice:
		return internalIn(t.Elem(), seen)
	case *types.Array:
		return internalIn(t.Elem(), seen)
	case *types.Map:
		if n := internalIn(t.Key(), seen); n != "" {
			return n
		}
		return internalIn(t.Elem(), seen)
	case *types.Chan:
		return internalIn(t.Elem(), seen)
	case *types.Signature:
		if n := internalIn(t.Params(), seen); n != "" {
			return n
		}
		return internalIn(t.Results(), seen)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			if n := internalIn(t.At(i).Type(), seen); n != "" {
				return n
			}
		}
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if !t.Field(i).Exported() && !t.Field(i).Embedded() {
				continue
			}
			if n := internalIn(t.Field(i).Type(), seen); n != "" {
				return n
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			if n := internalIn(t.Method(i).Type(), seen); n != "" {
				return n
			}
		}
	}
	return ""
}
