//go:build linux

package main

// The torture test's environment: HTTP backends the test kills and
// revives, floods and an impostor; the gslbd processes are
// gslbdproc_linux_test.go's, the Knot secondary is internal/testknot's.
// Nothing here checks anything; torture_check_linux_test.go does.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
)

// stablePort returns a loopback port free for TCP and UDP below the
// kernel's ephemeral range: the walk restarts servers on the same ports,
// and a port of that range could meanwhile be taken by any outgoing
// connection or UDP query (the watcher alone opens 150 a second).
func stablePort() (string, error) {
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 12000 {
				lo = n
			}
		}
	}
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+mathrand.IntN(lo-10000)))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		return addr, nil
	}
	return "", errors.New("no free loopback port below the ephemeral range")
}

func tFreeAddr(t *testing.T) string {
	t.Helper()
	a, err := stablePort()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tBackend is a real HTTP server on loopback that the test kills (its
// listener closed: connections refused), hangs (connections accepted,
// requests never answered, as a deadlocked or frozen application's) and
// revives on the same port.
type tBackend struct {
	mu   sync.Mutex
	port string
	srv  *http.Server
	done chan struct{}
	// hung is open while the backend hangs: requests wait on it (or on
	// their client going away) and are answered only once it is closed.
	hung chan struct{}
}

func newTBackend(t *testing.T) *tBackend {
	b := &tBackend{}
	if err := b.listen(tFreeAddr(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.setDead(true) })
	return b
}

func (b *tBackend) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	b.port = ln.Addr().String()
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		hung := b.hung
		b.mu.Unlock()
		if hung != nil {
			select {
			case <-hung:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second}
	b.done = make(chan struct{})
	srv, done := b.srv, b.done
	go func() { _ = srv.Serve(ln); close(done) }()
	return nil
}

// setHung makes a serving backend hang: it keeps accepting connections
// and reading requests but answers none until setDead revives it.
func (b *tBackend) setHung() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv == nil {
		return errors.New("the backend is dead")
	}
	if b.hung == nil {
		b.hung = make(chan struct{})
	}
	return nil
}

// setDead kills (closes) or revives (listens again on the same port, or
// answers again if it hung).
func (b *tBackend) setDead(dead bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	// A hung backend's waiting requests are released last, once its
	// connections are closed (a kill) or it serves again (a revive).
	defer func() {
		if b.hung != nil {
			close(b.hung)
			b.hung = nil
		}
	}()
	if dead {
		if b.srv != nil {
			_ = b.srv.Close()
			<-b.done
			b.srv = nil
		}
		return nil
	}
	if b.srv != nil {
		return nil
	}
	var err error
	for range 50 {
		if err = b.listen(b.port); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // the port in TIME_WAIT or taken a moment
	}
	return err
}

func (b *tBackend) addr() string { return b.port }

// impostor is another local process's HTTP server on the controller's
// port while the controller is down: it serves a forged (or an older)
// snapshot on the replication paths and notes every request that carried
// the replication secret in clear text.
type impostor struct {
	srv        *http.Server
	done       chan struct{}
	requests   atomic.Int64
	secretSeen atomic.Int64
}

func startImpostor(addr, secret string, snap memory.Snapshot) (*impostor, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(snap)
	changes, _ := json.Marshal(map[string]any{"version": snap.Version, "epoch": snap.Epoch, "full": true, "snapshot": snap})
	im := &impostor{done: make(chan struct{})}
	im.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		im.requests.Add(1)
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					im.secretSeen.Add(1)
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/snapshot"):
			_, _ = w.Write(body)
		case strings.HasSuffix(r.URL.Path, "/changes"):
			_, _ = w.Write(changes)
		default:
			http.NotFound(w, r)
		}
	})}
	go func() { _ = im.srv.Serve(ln); close(im.done) }()
	return im, nil
}

func (im *impostor) close() {
	if im == nil {
		return
	}
	_ = im.srv.Close()
	<-im.done
}

// fetchSnapshot reads the controller's full snapshot as a node would.
func fetchSnapshot(base, secret string) (memory.Snapshot, error) {
	var s memory.Snapshot
	req, _ := http.NewRequest(http.MethodGet, "http://"+base+"/replication/snapshot", nil)
	req.Header.Set(replication.DefaultSecretHeader, secret)
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return s, fmt.Errorf("snapshot: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// httpDo sends one request with a fresh client (no pooled connection)
// and returns the status and body; err when no answer came within timeout.
func httpDo(method, base, path, host string, timeout time.Duration) (int, string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: timeout}
	req, err := http.NewRequest(method, "http://"+base+path, nil)
	if err != nil {
		return 0, "", err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), nil
}

var errSkip = errors.New("skipped")
