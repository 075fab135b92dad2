package testproc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stopped is a testing.TB that records how Missing stopped it.
type stopped struct {
	testing.TB
	how string
}

func (s *stopped) Helper()                           {}
func (s *stopped) Skip(args ...any)                  { s.how = "skip: " + fmt.Sprint(args...) }
func (s *stopped) Fatalf(format string, args ...any) { s.how = "fail: " + fmt.Sprintf(format, args...) }

// TestMissing: a skip that names the variable, or a failure where the
// variable is "1".
func TestMissing(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "skip: x is not installed; set GSLBKIT_REQUIRE_TESTPROC=1 to fail instead"},
		{"0", "skip: x is not installed; set GSLBKIT_REQUIRE_TESTPROC=1 to fail instead"},
		{"1", "fail: x is not installed; GSLBKIT_REQUIRE_TESTPROC=1 requires it"},
	} {
		t.Setenv("GSLBKIT_REQUIRE_TESTPROC", c.env)
		s := &stopped{TB: t}
		testproc.Missing(s, "GSLBKIT_REQUIRE_TESTPROC", "x is not installed")
		if s.how != c.want {
			t.Errorf("GSLBKIT_REQUIRE_TESTPROC=%q: %s, want %s", c.env, s.how, c.want)
		}
	}
}

// TestRequire: the first installed name's path, found in PATH; none
// installed stops the test as Missing does.
func TestRequire(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits are a unix notion")
	}
	dir := t.TempDir()
	tool := filepath.Join(dir, "gslbkit-testproc-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("GSLBKIT_REQUIRE_TESTPROC", "1")
	s := &stopped{TB: t}
	if got := testproc.Require(s, "GSLBKIT_REQUIRE_TESTPROC", "none", "gslbkit-testproc-absent", "gslbkit-testproc-tool"); got != tool || s.how != "" {
		t.Errorf("Require = %q (%s), want %q", got, s.how, tool)
	}
	if got := testproc.Require(s, "GSLBKIT_REQUIRE_TESTPROC", "absent is not installed", "gslbkit-testproc-absent"); got != "" ||
		s.how != "fail: absent is not installed; GSLBKIT_REQUIRE_TESTPROC=1 requires it" {
		t.Errorf("Require of a missing tool = %q (%s)", got, s.how)
	}
}
