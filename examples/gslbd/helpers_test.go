package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/goleak"
)

// childMain, when set (by a platform's test file), runs first: it may turn
// this process into a gslbd subprocess of a test and never return.
var childMain func()

func TestMain(m *testing.M) {
	if childMain != nil {
		childMain()
	}
	root, err := os.MkdirTemp("", "gslbd-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testStateRoot = root
	// A controller whose test forgot its own stateDir would use the
	// default one, shared by every test and process: make that default a
	// path under a regular file, so such a controller fails to start.
	trap := filepath.Join(root, "no-default-state-dir-in-tests")
	if err := os.WriteFile(trap, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("STATE_DIRECTORY", filepath.Join(trap, "state"))
	goleak.VerifyTestMain(cleanupM{m, root})
}

// cleanupM removes the tests' state directories after the run.
type cleanupM struct {
	m    *testing.M
	root string
}

func (c cleanupM) Run() int {
	defer os.RemoveAll(c.root)
	return c.m.Run()
}

// testStateRoot holds every test's own state directory (see ownStateDir).
var testStateRoot string

// ownStateDir returns a new state directory no other test or process
// uses.
func ownStateDir() string {
	d, err := os.MkdirTemp(testStateRoot, "state-")
	if err != nil {
		panic(err)
	}
	return d
}

// withStateDir gives yaml its own stateDir unless it names one.
func withStateDir(yaml string) string {
	if strings.Contains(yaml, "stateDir:") {
		return yaml
	}
	return "stateDir: " + ownStateDir() + "\n" + yaml
}

// syncBuffer is a bytes.Buffer safe for concurrent writers that signals
// when the first line is complete.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	first chan string
	sent  bool
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{first: make(chan string, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if !s.sent && s.first != nil {
		if line, _, ok := strings.Cut(s.b.String(), "\n"); ok {
			s.sent = true
			s.first <- line
		}
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemon is a gslbd run by a test.
type daemon struct {
	dns, http string
	stderr    *syncBuffer
	cancel    context.CancelFunc
	done      chan error
}

var startedRE = regexp.MustCompile(`dns=(\S+) http=(\S+)`)

// startDaemon writes yaml to a file and runs gslbd on it with extra args;
// the daemon is stopped (and must return nil) when the test ends.
func startDaemon(t *testing.T, yaml string, args ...string) *daemon {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gslbd.yaml")
	if err := os.WriteFile(path, []byte(withStateDir(yaml)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := newSyncBuffer(), newSyncBuffer()
	d := &daemon{stderr: errb, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- run(ctx, append([]string{"-config", path}, args...), out, errb) }()
	select {
	case line := <-out.first:
		m := startedRE.FindStringSubmatch(line)
		if m == nil {
			cancel()
			t.Fatalf("unexpected first line %q", line)
		}
		d.dns, d.http = m[1], m[2]
	case err := <-d.done:
		cancel()
		t.Fatalf("gslbd exited before serving: %v\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("gslbd did not start within 30s")
	}
	t.Cleanup(func() { d.stop(t) })
	return d
}

// stop cancels the daemon and checks that it returned nil; idempotent.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("gslbd returned %v\n%s", err, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Error("gslbd did not stop within 30s of cancel")
	}
}

// backend is an HTTP server on loopback whose health a test switches.
type backend struct {
	srv  *httptest.Server
	down atomic.Bool
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if b.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// addr is the backend's host:port.
func (b *backend) addr() string { return strings.TrimPrefix(b.srv.URL, "http://") }

// answer asks server for name's A records and returns the addresses (or
// "CNAME target" entries) sorted, and the rcode; an error leaves nil.
func answer(server, name string) ([]string, int) {
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.RecursionDesired = true
	r, _, err := c.Exchange(m, server)
	if err != nil || !r.Response {
		// Not a reply: asking a port nothing holds, the client's own
		// ephemeral port can be that very port (the kernel picks it from
		// the same range), and its query comes back to it as the "answer".
		return nil, -1
	}
	var out []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.CNAME:
			out = append(out, "CNAME "+rr.Target)
		}
	}
	slices.Sort(out)
	return out, r.Rcode
}

// waitFor polls cond every 20 ms until it holds, failing after guard (a
// hang guard, not a timing assertion).
func waitFor(t *testing.T, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("hang guard: %s did not happen within %v", what, guard)
		}
		time.Sleep(20 * time.Millisecond) // polling a real socket; not a wait for a fixed time
	}
}

// post sends a POST to the daemon's API and returns the status.
func post(t *testing.T, base, path string) int {
	t.Helper()
	resp, err := http.Post("http://"+base+path, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// get fetches a path of the daemon's HTTP server.
func get(t *testing.T, base, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// controllerYAML is a relaxed-style config with the given records block.
func controllerYAML(extra, records string) string {
	return withStateDir(extra) + "\n" + fmt.Sprintf(`ownerId: test
zone: example.test.
style: relaxed
dns: {addr: "127.0.0.1:0"}
http: {addr: "127.0.0.1:0"}
probe:
  type: HTTP
  policy: {interval: 200ms, timeout: 200ms, warningThreshold: 1, criticalThreshold: 2, passingThreshold: 1, maxBackoff: 400ms}
  http: {path: /healthz}
records:
%s`, records)
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
