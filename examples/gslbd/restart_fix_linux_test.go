//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/provider/memory"
)

// fixedPorts gives a controllerYAML config fixed loopback ports (so a
// restarted process answers where the old one did).
func fixedPorts(t *testing.T, y string) (string, string, string) {
	t.Helper()
	dnsAddr, httpAddr := freeAddr(t), freeAddr(t)
	out := strings.Replace(y, `dns: {addr: "127.0.0.1:0"}`+"\n"+`http: {addr: "127.0.0.1:0"}`, fmt.Sprintf("dns: {addr: %q}\nhttp: {addr: %q}", dnsAddr, httpAddr), 1)
	if out == y {
		t.Fatal("no listeners to fix in the config")
	}
	return out, dnsAddr, httpAddr
}

// soaSerial asks server for the zone's SOA serial (0 without an answer).
func soaSerial(server string) uint32 {
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	m := new(dns.Msg)
	m.SetQuestion("example.test.", dns.TypeSOA)
	r, _, err := c.Exchange(m, server)
	if err != nil || len(r.Answer) != 1 {
		return 0
	}
	if s, ok := r.Answer[0].(*dns.SOA); ok {
		return s.Serial
	}
	return 0
}

// switchable is a DNS address a sampler follows across restarts.
type switchable struct {
	mu   sync.Mutex
	addr string
}

func (s *switchable) get() string { s.mu.Lock(); defer s.mu.Unlock(); return s.addr }

// TestStartWithoutUsableStateNeverAnswersNXDOMAINOrADeadBackend: a first
// start (no state file), then a kill -9 and a restart over a truncated
// state file, with a node following the controller from its first
// second. Neither ever answers NXDOMAIN for the configured name, nor the
// dead backend: DNS and replication wait for the first probe results, and
// an address nothing is known of is served only once a probe passed.
// (Before: NXDOMAIN for the whole startup hold, then the dead backend
// answered as "warning" for a probe or two; a node copied the empty zone.)
func TestStartWithoutUsableStateNeverAnswersNXDOMAINOrADeadBackend(t *testing.T) {
	live, dead := newBackend(t), newBackend(t)
	dead.down.Store(true)
	dir := filepath.Join(ownStateDir(), "state")
	const secret = "0123456789abcdef0123"
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML(fmt.Sprintf("stateDir: %s\nreplication: {secret: %s}", dir, secret),
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    probe: {policy: {interval: 500ms, timeout: 500ms, maxBackoff: 1s}}\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", live.addr(), dead.addr())))
	// (Probes get 500 ms: on a loaded host a first probe of the live
	// backend that times out would rightly leave the name no address that
	// passed, and its first answer would be both configured addresses, as
	// the README says.)
	const name = "app.example.test."
	guard := 60 * time.Second
	var nodeDNS switchable
	// Samplers run only while a controller holds the port (between two
	// processes another program on this machine may bind it); the
	// listener is bound from the first line on, read or not.
	ctl := startSubDaemon(t, y, 1024)
	s := sample(name, func() string { return ctlDNS }, nodeDNS.get)
	node := startDaemon(t, fmt.Sprintf("zone: example.test.\ndns: {addr: \"127.0.0.1:0\"}\nhttp: {addr: \"127.0.0.1:0\"}\nreplication: {secret: %s}\nnode: {url: \"http://%s/replication\", interval: 100ms}\n", secret, ctlHTTP), "-node")
	nodeDNS.mu.Lock()
	nodeDNS.addr = node.dns
	nodeDNS.mu.Unlock()
	waitFor(t, guard, "the controller probed the dead backend three times", func() bool {
		_, body := get(t, ctlHTTP, "/api/records/app.example.test")
		return probesOf(body, "192.0.2.2") >= 3
	})
	waitFor(t, guard, "the state file is written", func() bool { _, err := os.Stat(filepath.Join(dir, stateFileName)); return err == nil })
	seen := s.done()
	ctl.kill9()
	if err := os.Truncate(filepath.Join(dir, stateFileName), 100); err != nil {
		t.Fatal(err)
	}
	ctl2 := startSubDaemon(t, y, 1024)
	s = sample(name, func() string { return ctlDNS }, nodeDNS.get)
	waitFor(t, guard, "the restarted controller probed the dead backend three times", func() bool {
		_, body := get(t, ctlHTTP, "/api/records/app.example.test")
		return probesOf(body, "192.0.2.2") >= 3
	})
	waitFor(t, guard, "the node answers the live backend", func() bool { got, _ := answer(node.dns, name); return len(got) == 1 })
	for k, at := range s.done() {
		if _, ok := seen[k]; !ok {
			seen[k] = at
		}
	}
	for k := range seen {
		t.Logf("seen: %s", k)
		if strings.Contains(k, "rcode 3") || strings.Contains(k, "192.0.2.2") {
			t.Errorf("answered NXDOMAIN or the dead backend: %s", k)
		}
	}
	if !strings.Contains(ctl2.stderr.String(), "state file ignored") {
		t.Errorf("the truncated state file was not reported:\n%s", ctl2.stderr.String())
	}
}

// TestRestartAfterConfigEditForgetsRemovedNames: a record removed from the
// config while the controller was down is gone from the restored zone from
// the restart's first answer; /readyz does not report it lingering.
// (Before: the restored zone kept the removed name for ever.)
func TestRestartAfterConfigEditForgetsRemovedNames(t *testing.T) {
	b := newBackend(t)
	dir := filepath.Join(ownStateDir(), "state")
	recs := fmt.Sprintf("  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1, probeAddr: %q}]\n", b.addr())
	old := fmt.Sprintf("  - name: old.example.test.\n    addresses: [{ip: 192.0.2.9, probeAddr: %q}]\n", b.addr())
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML("stateDir: "+dir, recs+old))
	guard := 60 * time.Second
	ctl := startSubDaemon(t, y, 1024)
	waitFor(t, guard, "both names answered and saved", func() bool {
		a, _ := answer(ctlDNS, "app.example.test.")
		o, _ := answer(ctlDNS, "old.example.test.")
		st, ok, _ := loadState(dir, "example.test.", "test")
		if len(a) != 1 || len(o) != 1 || !ok || st.Published == nil {
			return false
		}
		for _, r := range st.Published.Zones[0].Records {
			if r.Name == "old" {
				return true
			}
		}
		return false
	})
	ctl.kill9()
	killed := time.Now()
	y2 := strings.Replace(y, old, "", 1)
	ctl2 := startSubDaemon(t, y2, 1024)
	// While the port is free between the two processes another program
	// on this machine may bind it: only answers from after the restart's
	// first line count (the zone is restored before the listener binds).
	s := sample("old.example.test.", func() string { return ctlDNS })
	defer func() {
		if t.Failed() {
			t.Logf("restarted controller:\n%s", ctl2.stderr.String())
		}
	}()
	waitFor(t, guard, "app answered after the restart", func() bool { a, _ := answer(ctlDNS, "app.example.test."); return len(a) == 1 })
	waitFor(t, guard, "ready", func() bool { code, _ := get(t, ctlHTTP, "/readyz"); return code == 200 })
	for k, at := range s.done() {
		if !strings.Contains(k, "rcode 3: ") || strings.Contains(k, "192.0.2.9") {
			t.Errorf("the removed name answered after the restart (%v after the kill): %s", at.Sub(killed), k)
		}
	}
	if _, body := get(t, ctlHTTP, "/readyz"); strings.Contains(body, "names_not_in_config") {
		t.Errorf("/readyz: %s", body)
	}
}

// TestSerialNeverGoesBack: the SOA serial moves forward across a restart
// with the state file, and across one with a corrupt file (from the
// clock: the documented condition is that the earlier run did not push
// the serial ahead of the clock, more than one change a second). (Before:
// a restart without a usable file started again at serial 1, and
// secondaries kept their old copy until it expired.)
func TestSerialNeverGoesBack(t *testing.T) {
	b := newBackend(t)
	dir := filepath.Join(ownStateDir(), "state")
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML("stateDir: "+dir,
		fmt.Sprintf("  - name: app.example.test.\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", b.addr(), b.addr())))
	guard := 60 * time.Second
	ctl := startSubDaemon(t, y, 1024)
	waitFor(t, guard, "both answered", func() bool { a, _ := answer(ctlDNS, "app.example.test."); return len(a) == 2 })
	if code := post(t, ctlHTTP, "/api/records/app.example.test/addresses/192.0.2.2/drain"); code != 200 {
		t.Fatalf("drain: %d", code)
	}
	s1 := soaSerial(ctlDNS)
	ctl.kill9()
	ctl = startSubDaemon(t, y, 1024)
	s2 := soaSerial(ctlDNS)
	if s2 == 0 || !(s2 > s1) {
		t.Fatalf("serial %d before the restart, %d after it (state file kept)", s1, s2)
	}
	waitFor(t, guard, "the restarted controller publishes", func() bool { code, _ := get(t, ctlHTTP, "/readyz"); return code == 200 })
	if code := post(t, ctlHTTP, "/api/records/app.example.test/addresses/192.0.2.2/undrain"); code != 200 {
		t.Fatalf("undrain: %d", code)
	}
	waitFor(t, guard, "both answered again", func() bool { a, _ := answer(ctlDNS, "app.example.test."); return len(a) == 2 })
	s3 := soaSerial(ctlDNS)
	ctl.kill9()
	if err := os.WriteFile(filepath.Join(dir, stateFileName), []byte(`{"format": 1, "sha256": "00", "state": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "the clock passes the last serial (the documented condition)", func() bool { return uint32(time.Now().Unix()) > s3 })
	startSubDaemon(t, y, 1024)
	waitFor(t, guard, "answered after the restart", func() bool { a, _ := answer(ctlDNS, "app.example.test."); return len(a) == 2 })
	if s4 := soaSerial(ctlDNS); !(s4 > s3) {
		t.Fatalf("serial %d before the restart, %d after it (corrupt state file)", s3, s4)
	}
	t.Logf("serials: %d, %d (restart with the file), %d, then from the clock %d", s1, s2, s3, soaSerial(ctlDNS))
}

// TestStaleStateKeepsTheLastGoodAnswer: failClosed, passingThreshold 2,
// every backend healthy, a restart whose state file is older than it is
// trusted: the answer stays the addresses — never the failover CNAME —
// because an address nothing recent is known of passes on its first
// probe. (Before: restored critical, then recovery, and the failover
// CNAME for two probe intervals.) The probes get 1 s: a first probe that
// times out on a loaded host rightly keeps its address critical.
func TestStaleStateKeepsTheLastGoodAnswer(t *testing.T) {
	b := newBackend(t)
	dir := filepath.Join(ownStateDir(), "state")
	y, ctlDNS, _ := fixedPorts(t, controllerYAML("stateDir: "+dir+"\npolicy: {allUnhealthy: failClosed}",
		fmt.Sprintf("  - name: app.example.test.\n    failover: app.backup.example.net.\n    probe: {policy: {passingThreshold: 2, interval: 1s, timeout: 1s, maxBackoff: 2s}}\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", b.addr(), b.addr())))
	guard := 60 * time.Second
	const name = "app.example.test."
	ctl := startSubDaemon(t, y, 1024)
	waitFor(t, guard, "both answered and saved", func() bool {
		a, _ := answer(ctlDNS, name)
		st, ok, _ := loadState(dir, "example.test.", "test")
		return len(a) == 2 && ok && st.Addresses[name+"/192.0.2.1"].State == "passing" && st.Addresses[name+"/192.0.2.2"].State == "passing" && st.Published != nil
	})
	ctl.kill9()
	st, _, err := loadState(dir, "example.test.", "test")
	if err != nil {
		t.Fatal(err)
	}
	st.SavedAt = st.SavedAt.Add(-time.Hour) // as if down for an hour
	if err := saveState(dir, st); err != nil {
		t.Fatal(err)
	}
	ctl = startSubDaemon(t, y, 1024)
	s := sample(name, func() string { return ctlDNS }) // from the restart on (see TestStartWithoutUsableState...)
	waitFor(t, guard, "three probes of each address", func() bool {
		_, body := get(t, ctl.http, "/api/records/app.example.test")
		return probesOf(body, "192.0.2.1") >= 3 && probesOf(body, "192.0.2.2") >= 3
	})
	for k := range s.done() {
		if !strings.HasSuffix(k, "rcode 0: 192.0.2.1,192.0.2.2") {
			t.Errorf("after a restart with a stale state file: %s", k)
		}
	}
}

// TestDrainSurvivesKill9AtOnce: a drain (and an undrain) answered 200 and
// followed at once by kill -9 holds after the restart, and the drained
// address is never answered by the restarted process. (Before: the file
// was written after the answer, so the drain was sometimes lost, and the
// restored zone served the drained address until the first publication.)
func TestDrainSurvivesKill9AtOnce(t *testing.T) {
	b := newBackend(t)
	dir := filepath.Join(ownStateDir(), "state")
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML("stateDir: "+dir,
		fmt.Sprintf("  - name: app.example.test.\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n      - {ip: 192.0.2.3, probeAddr: %q}\n", b.addr(), b.addr(), b.addr())))
	guard := 60 * time.Second
	const name = "app.example.test."
	ctl := startSubDaemon(t, y, 1024)
	for i, step := range []struct {
		ip, action string
		drained    []string
	}{
		{"192.0.2.2", "drain", []string{"192.0.2.2"}},
		{"192.0.2.3", "drain", []string{"192.0.2.2", "192.0.2.3"}},
		{"192.0.2.2", "undrain", []string{"192.0.2.3"}},
	} {
		waitFor(t, guard, "ready", func() bool { code, _ := get(t, ctlHTTP, "/readyz"); return code == 200 })
		if code := post(t, ctlHTTP, "/api/records/app.example.test/addresses/"+step.ip+"/"+step.action); code != 200 {
			t.Fatalf("step %d: %s %s: %d", i, step.action, step.ip, code)
		}
		ctl.kill9()
		ctl = startSubDaemon(t, y, 1024)
		s := sample(name, func() string { return ctlDNS })
		waitFor(t, guard, "the restarted controller probed every address", func() bool {
			_, body := get(t, ctlHTTP, "/api/records/app.example.test")
			return probesOf(body, "192.0.2.1") >= 2 && probesOf(body, "192.0.2.2") >= 2 && probesOf(body, "192.0.2.3") >= 2
		})
		for k := range s.done() {
			for _, ip := range step.drained {
				if strings.Contains(k, ip) {
					t.Errorf("step %d (%s %s): a drained address was answered after kill -9: %s", i, step.action, step.ip, k)
				}
			}
		}
		_, body := get(t, ctlHTTP, "/api/records/app.example.test")
		if n := strings.Count(body, `"drained": true`); n != len(step.drained) {
			t.Errorf("step %d (%s %s): %d addresses drained after the restart, want %d:\n%s", i, step.action, step.ip, n, len(step.drained), body)
		}
	}
}

// TestFirstStartAllDeadAnswersConfiguredAddresses: a first start (no state
// file) under keepLast, for a record without a failover name whose every
// backend is dead, and a failClosed one beside it. The keepLast name never
// answers NXDOMAIN or NODATA: its first answer is its configured
// addresses, kept until one passes, and /readyz
// says why (first_answer_unverified); once a backend comes up it answers
// that one alone. The failClosed record is not concerned (policy.allUnhealthy
// is global, so it runs in a second process). (Before: with this one
// record nothing was published, so DNS never opened; beside other records
// the name answered NXDOMAIN until an address passed, TestTortureScenarios
// item15.)
func TestFirstStartAllDeadAnswersConfiguredAddresses(t *testing.T) {
	b1, b2, b3 := newBackend(t), newBackend(t), newBackend(t)
	b1.down.Store(true)
	b2.down.Store(true)
	b3.down.Store(true)
	const name = "app.example.test."
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML("stateDir: \"\"",
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", b1.addr(), b2.addr())))
	guard := 60 * time.Second
	s := sample(name, func() string { return ctlDNS })
	startSubDaemon(t, y, 1024)
	waitFor(t, guard, "the dead backends probed three times", func() bool {
		_, body := get(t, ctlHTTP, "/api/records/app.example.test")
		return probesOf(body, "192.0.2.1") >= 3 && probesOf(body, "192.0.2.2") >= 3
	})
	waitFor(t, guard, "DNS is read", func() bool { _, rcode := answer(ctlDNS, name); return rcode != -1 })
	if got, rcode := answer(ctlDNS, name); rcode != dns.RcodeSuccess || strings.Join(got, ",") != "192.0.2.1,192.0.2.2" {
		t.Errorf("with every backend dead: %v rcode %d, want the configured addresses", got, rcode)
	}
	if _, body := get(t, ctlHTTP, "/readyz"); !strings.Contains(body, "first_answer_unverified") || !strings.Contains(body, name) {
		t.Errorf("/readyz does not name the unverified first answer:\n%s", body)
	}
	if _, body := get(t, ctlHTTP, "/api/status"); !strings.Contains(body, "first_answer_unverified") {
		t.Errorf("the status body does not name first_answer_unverified:\n%s", body)
	}
	b2.down.Store(false)
	waitFor(t, guard, "the live backend alone is answered", func() bool {
		got, _ := answer(ctlDNS, name)
		return strings.Join(got, ",") == "192.0.2.2"
	})
	waitFor(t, guard, "first_answer_unverified clears", func() bool {
		_, body := get(t, ctlHTTP, "/readyz")
		return !strings.Contains(body, "first_answer_unverified")
	})
	for k := range s.done() {
		t.Logf("seen: %s", k)
		if !strings.Contains(k, "rcode 0: 192.0.2") {
			t.Errorf("answered other than addresses: %s", k)
		}
	}

	// failClosed keeps withdrawing a record none of whose addresses passed.
	y2, dns2, http2 := fixedPorts(t, controllerYAML("stateDir: \"\"\npolicy: {allUnhealthy: failClosed}",
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.3, probeAddr: %q}\n", b3.addr())))
	startSubDaemon(t, y2, 1024)
	waitFor(t, guard, "the failClosed controller probed its dead backend", func() bool {
		_, body := get(t, http2, "/api/records/app.example.test")
		return probesOf(body, "192.0.2.3") >= 2
	})
	if got, rcode := answer(dns2, name); len(got) != 0 || rcode == -1 {
		t.Errorf("failClosed with its backend dead: %v rcode %d, want no address", got, rcode)
	}
	if _, body := get(t, http2, "/readyz"); strings.Contains(body, "first_answer_unverified") {
		t.Errorf("failClosed reports an unverified first answer:\n%s", body)
	}
}

// TestSilentSecondaryGetsASerialPastItsOwn: the burst-then-restart case of
// I3 with the secondary away at the start. A controller starting without
// state is at the clock's serial; the secondary in transfer.notify, which
// holds a serial the previous run's burst ran ahead of the clock (1000
// here), does not answer then. Once it answers, the controller moves past
// its serial and notifies it: it transfers again instead of ignoring the
// zone. (Before: it was asked at the start only, and ignored the zone
// until the clock passed its serial and the zone changed.)
func TestSilentSecondaryGetsASerialPastItsOwn(t *testing.T) {
	secAddr := freeAddr(t)
	b := newBackend(t)
	d := startDaemon(t, controllerYAML(fmt.Sprintf("stateDir: \"\"\ntransfer:\n  allow: [{prefix: 127.0.0.0/8}]\n  notify: [%q]\n  notifyTimeout: 100ms", secAddr),
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n", b.addr())))
	guard := 60 * time.Second
	waitFor(t, guard, "the controller answers", func() bool { got, _ := answer(d.dns, "app.example.test."); return len(got) == 1 })
	held := soaSerial(d.dns) + 1000
	notified := make(chan uint32, 100)
	pc, err := net.ListenPacket("udp", secAddr)
	if err != nil {
		t.Fatal(err)
	}
	sec := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		switch {
		case r.Opcode == dns.OpcodeNotify && len(r.Answer) == 1:
			if soa, ok := r.Answer[0].(*dns.SOA); ok {
				notified <- soa.Serial
			}
		case len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeSOA:
			m.Authoritative = true
			m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "example.test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
				Ns: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: held, Refresh: 60, Retry: 60, Expire: 600, Minttl: 60}}
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	sec.NotifyStartedFunc = func() { close(started) }
	go func() { _ = sec.ActivateAndServe() }()
	<-started
	defer func() { _ = sec.Shutdown() }()
	waitFor(t, guard, "the controller's serial passes the secondary's", func() bool { return memory.SerialGreater(soaSerial(d.dns), held) })
	timeout := time.After(guard)
	for {
		select {
		case s := <-notified:
			if memory.SerialGreater(s, held) {
				return
			}
		case <-timeout:
			t.Fatalf("no NOTIFY with a serial past %d within %v", held, guard)
		}
	}
}
