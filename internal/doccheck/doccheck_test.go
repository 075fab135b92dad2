package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestModuleDocs checks every package of the module (found by go list, so
// new packages are checked without listing them) and every Markdown file.
func TestModuleDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	set, err := Load(root, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Packages) < 10 {
		t.Fatalf("loaded %d packages, want the whole module", len(set.Packages))
	}
	problems := set.Check()
	exs, err := set.CheckExamples()
	if err != nil {
		t.Fatal(err)
	}
	problems = append(problems, exs...)
	for _, md := range markdownFiles(t, root) {
		ps, err := set.CheckMarkdown(md)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, ps...)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("checked %d packages", len(set.Packages))
}

// markdownFiles returns the module's Markdown files but the changelog,
// which keeps old names on purpose, test fixtures and nested modules.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module: not loaded, so not checked
			}
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") && d.Name() != "CHANGELOG.md" {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFixture proves the check fails on wrong citations and passes the
// right ones.
func TestFixture(t *testing.T) {
	set, err := Load(".", "./testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	problems := set.Check()
	md, err := set.CheckMarkdown(filepath.Join("testdata", "bad", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	exs, err := set.CheckExamples()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range append(append(problems, md...), exs...) {
		got = append(got, p.Cited+": "+p.Why)
	}
	want := []string{
		"[Thing.Missing]: Thing has no field or method Missing",
		"[Gone]: no Gone in package bad",
		"[time.Nope]: no Nope in time",
		"time.Durationn: no Durationn in time",
		"Thing.Colour: Thing has no field or method Colour",
		"bad.Nothing: no Nothing in github.com/gslbkit/gslb/internal/doccheck/testdata/bad",
		"Thing.Cells: shows unexported width",
		"`bad.Thing.Weight`: Thing has no field or method Weight",
		"`Thingy.Name`: no Thingy in any package of the module",
		"```go block: t.Weight undefined (type bad.Thing has no field or method Weight)",
		"Example: godoc cannot show it as a program: it uses a name declared in another file",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join("testdata", "bad", "bad.go")); err != nil {
		t.Fatal(err)
	}
}
