//go:build linux

package main

// gslbd as a child process of a test: this test binary, run as gslbd
// (childMain), with its own descriptor limit where a test wants one.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A gslbd subprocess of a test is this test binary run twice: first with
// GSLBD_E2E_NOFILE, it lowers its descriptor limit (soft and hard) and
// execs itself; then, with GSLBD_E2E_ARGS, it is gslbd (main) until SIGTERM.
func init() {
	childMain = func() {
		if n := os.Getenv("GSLBD_E2E_NOFILE"); n != "" {
			v, err := strconv.ParseUint(n, 10, 64)
			if err != nil {
				fmt.Fprintln(os.Stderr, "GSLBD_E2E_NOFILE:", err)
				os.Exit(2)
			}
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
				fmt.Fprintln(os.Stderr, "setrlimit:", err)
				os.Exit(2)
			}
			env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "GSLBD_E2E_NOFILE=") })
			err = syscall.Exec("/proc/self/exe", os.Args, env)
			fmt.Fprintln(os.Stderr, "exec:", err)
			os.Exit(2)
		}
		if a := os.Getenv("GSLBD_E2E_ARGS"); a != "" {
			var args []string
			if err := json.Unmarshal([]byte(a), &args); err != nil {
				fmt.Fprintln(os.Stderr, "GSLBD_E2E_ARGS:", err)
				os.Exit(2)
			}
			os.Args = append([]string{"gslbd"}, args...)
			main()
			os.Exit(0)
		}
	}
}

var addrRE = regexp.MustCompile(`dns=(\S+) http=(\S+)`)

// gproc is one gslbd process: a test's, or a controller or node the
// torture walk starts, kills and restarts on the same ports.
type gproc struct {
	role      string
	cmd       *exec.Cmd
	dns, http string // the addresses it serves, from its first line
	stderr    *syncBuffer
	exited    chan struct{}
}

// startGslbd runs gslbd (this test binary, see childMain) on the config
// at path with args; nofile > 0 lowers its descriptor limit. It returns
// once the process printed the addresses it serves, or an error with its
// log when it exited first.
func startGslbd(role, path string, nofile int, args ...string) (*gproc, error) {
	a, _ := json.Marshal(append([]string{"-config", path}, args...))
	p := &gproc{role: role, stderr: newSyncBuffer(), exited: make(chan struct{})}
	p.stderr.first = nil
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), "GSLBD_E2E_ARGS="+string(a))
	if nofile > 0 {
		p.cmd.Env = append(p.cmd.Env, fmt.Sprintf("GSLBD_E2E_NOFILE=%d", nofile))
	}
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case first <- sc.Text():
			default:
			}
		}
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	select {
	case line := <-first:
		m := addrRE.FindStringSubmatch(line)
		if m == nil {
			p.kill9()
			return nil, fmt.Errorf("%s: unexpected first line %q\n%s", role, line, p.stderr.String())
		}
		p.dns, p.http = m[1], m[2]
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before serving:\n%s", role, lastLines(p.stderr.String(), 20))
	case <-time.After(30 * time.Second):
		p.kill9()
		return nil, fmt.Errorf("hang guard: %s did not start within 30s\n%s", role, lastLines(p.stderr.String(), 20))
	}
}

// kill9 sends SIGKILL and waits for the process to be gone.
func (p *gproc) kill9() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// term sends SIGTERM and waits (30 s hang guard, then SIGKILL).
func (p *gproc) term() error {
	if p == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		p.kill9()
		return fmt.Errorf("hang guard: %s did not stop within 30s of SIGTERM", p.role)
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// startSubDaemon runs gslbd on yaml in a subprocess whose RLIMIT_NOFILE is
// nofile (soft and hard); it is stopped with SIGTERM when the test ends.
func startSubDaemon(t *testing.T, yaml string, nofile int) *gproc {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gslbd.yaml")
	if err := os.WriteFile(path, []byte(withStateDir(yaml)), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := startGslbd("gslbd", path, nofile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.term(); err != nil {
			t.Error(err)
		}
	})
	return p
}
