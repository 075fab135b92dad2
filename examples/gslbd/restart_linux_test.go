//go:build linux

package main

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider/memory"
)

// freeAddr returns a loopback host:port free for TCP and UDP right now
// (testproc.FreePort).
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// sampler asks each server for name, again and again, and keeps every
// distinct answer it saw with the first time it saw it.
type sampler struct {
	mu   sync.Mutex
	seen map[string]time.Time
	stop chan struct{}
	wg   sync.WaitGroup
}

func sample(name string, servers ...func() string) *sampler {
	s := &sampler{seen: map[string]time.Time{}, stop: make(chan struct{})}
	for _, srv := range servers {
		s.wg.Go(func() {
			for {
				select {
				case <-s.stop:
					return
				default:
				}
				addr := srv()
				if addr == "" {
					continue
				}
				got, rcode := answer(addr, name)
				if rcode == -1 {
					continue // no reply (the server is down): not an answer
				}
				k := fmt.Sprintf("%s rcode %d: %s", addr, rcode, strings.Join(got, ","))
				s.mu.Lock()
				if _, ok := s.seen[k]; !ok {
					s.seen[k] = time.Now()
				}
				s.mu.Unlock()
			}
		})
	}
	return s
}

func (s *sampler) done() map[string]time.Time {
	close(s.stop)
	s.wg.Wait()
	return s.seen
}

// TestKill9RestartNeverServesADeadBackend: a controller whose backend
// 192.0.2.2 is dead is killed with SIGKILL and restarted over the same
// state directory, with a node following it, and with the fast-failing
// test policy (warning threshold 1). Throughout, neither the controller nor
// the node ever answers the dead backend: the restarted controller restores
// its critical state and serves the zone it last published, and publishes
// nothing before its own probes have spoken. A drain made before the kill
// holds after it. (Before the state file, every address restarted passing
// and the dead backend was served until probes failed again.)
func TestKill9RestartNeverServesADeadBackend(t *testing.T) {
	live, dead, drained := newBackend(t), newBackend(t), newBackend(t)
	dead.down.Store(true)
	ctlDNS, ctlHTTP := freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	const secret = "0123456789abcdef0123"
	y := strings.Replace(controllerYAML(fmt.Sprintf("stateDir: %s\nreplication: {secret: %s}", filepath.Join(dir, "state"), secret),
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n      - {ip: 192.0.2.3, probeAddr: %q}\n",
			live.addr(), dead.addr(), drained.addr())),
		`dns: {addr: "127.0.0.1:0"}`+"\n"+`http: {addr: "127.0.0.1:0"}`, fmt.Sprintf("dns: {addr: %q}\nhttp: {addr: %q}", ctlDNS, ctlHTTP), 1)
	guard := 60 * time.Second
	const name = "app.example.test."

	ctl := startSubDaemon(t, y, 1024)
	node := startDaemon(t, fmt.Sprintf("zone: example.test.\ndns: {addr: \"127.0.0.1:0\"}\nhttp: {addr: \"127.0.0.1:0\"}\nreplication: {secret: %s}\nnode: {url: \"http://%s/replication\", interval: 100ms}\n", secret, ctlHTTP), "-node")
	both := func(want ...string) func() bool {
		return func() bool {
			a, _ := answer(ctlDNS, name)
			b, _ := answer(node.dns, name)
			return slices.Equal(a, want) && slices.Equal(b, want)
		}
	}
	waitFor(t, guard, "both answer the two live backends", both("192.0.2.1", "192.0.2.3"))
	if code := post(t, ctlHTTP, "/api/records/app.example.test/addresses/192.0.2.3/drain"); code != 200 {
		t.Fatalf("drain: %d", code)
	}
	waitFor(t, guard, "both answer without the drained backend", both("192.0.2.1"))
	waitFor(t, guard, "the state file records the dead backend critical, the drain, and the zone without either", func() bool {
		st, ok, err := loadState(filepath.Join(dir, "state"), "example.test.", "test")
		if err != nil || !ok || st.Published == nil || st.Addresses[name+"/192.0.2.2"].State != "critical" || st.Addresses[name+"/192.0.2.3"].Drain == nil {
			return false
		}
		p := new(memory.Provider)
		return p.Restore(*st.Published) == nil && slices.Equal(zoneAnswer(p, name), []string{"192.0.2.1"})
	})

	// The controller's port is sampled only while a controller holds it:
	// between the two processes another program may bind it.
	ns := sample(name, func() string { return node.dns })
	ctl.kill9()
	killed := time.Now()
	ctl2 := startSubDaemon(t, y, 1024)
	restarted := time.Now()
	s := sample(name, func() string { return ctlDNS })
	// Watch the restarted controller through several probe rounds of the
	// dead backend.
	waitFor(t, guard, "the restarted controller probed the dead backend three times", func() bool {
		_, body := get(t, ctlHTTP, "/api/records/app.example.test")
		return strings.Count(body, `"probes"`) > 0 && probesOf(body, "192.0.2.2") >= 3
	})
	seen := s.done()
	for k, at := range ns.done() {
		seen[k] = at
	}
	t.Logf("killed at +0, restarted and serving after %v", restarted.Sub(killed))
	for k, at := range seen {
		t.Logf("answer seen %v after the kill: %s", at.Sub(killed).Round(time.Millisecond), k)
		if strings.Contains(k, "192.0.2.2") || strings.Contains(k, "192.0.2.3") {
			t.Errorf("a dead or drained backend was answered after the restart: %s", k)
		}
		if !strings.Contains(k, "rcode 0: 192.0.2.1") {
			t.Errorf("an answer other than the live backend after the restart: %q", k)
		}
	}
	if t.Failed() {
		t.Logf("controller %s (node %s), restarted:\n%s", ctlDNS, node.dns, ctl2.stderr.String())
	}
	if !strings.Contains(ctl2.stderr.String(), `"msg":"state restored"`) {
		t.Errorf("the restarted controller did not restore its state:\n%s", ctl2.stderr.String())
	}
}

// probesOf finds the probe count of ip in a record view's JSON (0 when
// absent).
func probesOf(body, ip string) int {
	i := strings.Index(body, `"ip": "`+ip+`"`)
	if i < 0 {
		return 0
	}
	j := strings.Index(body[i:], `"probes": `)
	if j < 0 {
		return 0
	}
	var n int
	fmt.Sscanf(body[i+j+len(`"probes": `):], "%d", &n)
	return n
}
