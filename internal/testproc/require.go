package testproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sbin are where Find looks after PATH: daemons (named, unbound, knotd)
// install to sbin directories a user's PATH may lack.
var sbin = []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin"}

// Find returns the path of the first of names that is installed, looking
// in PATH, then in /usr/sbin, /usr/local/sbin and /usr/bin; "" where none
// is.
func Find(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range sbin {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// Require returns Find(names...) or, where none of names is installed,
// calls Missing(t, env, msg).
func Require(t testing.TB, env, msg string, names ...string) string {
	t.Helper()
	p := Find(names...)
	if p == "" {
		Missing(t, env, msg)
	}
	return p
}

// Missing is the rule of the tests that need something installed (a
// server, a tool, a browser): msg says what is missing and how to install
// it; Missing skips t with "<msg>; set <env>=1 to fail instead", or, where
// the variable env is "1" (CI sets the GSLBKIT_REQUIRE_* variables), fails
// it with "<msg>; <env>=1 requires it".
func Missing(t testing.TB, env, msg string) {
	t.Helper()
	if os.Getenv(env) == "1" {
		t.Fatalf("%s; %s=1 requires it", msg, env)
		return
	}
	t.Skip(msg + "; set " + env + "=1 to fail instead")
}
