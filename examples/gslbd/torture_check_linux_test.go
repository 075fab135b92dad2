//go:build linux

package main

// The torture test's watcher and its invariant checkers, one per
// invariant of README.md "Invariants". The watcher asks the controller,
// the node and the Knot secondary every 20 ms; the checkers judge what it
// saw against the model, allowing each server its documented grace.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Grace a server has to show a change the model made: the controller
// answers from its own zone (a query in flight, the probe loop's wake-up);
// a node syncs every 200 ms and is notified; the secondary needs NOTIFY,
// a SOA query and an IXFR (NOTIFY retried every 500 ms). Both count from
// the moment the controller is back, and may first wait out its startup
// hold (under a second with these policies).
var tGrace = map[string]time.Duration{
	"controller": 500 * time.Millisecond,
	"node":       2 * time.Second,
	"knot":       4 * time.Second,
}

// obs is one reply the watcher saw.
type obs struct {
	server string
	name   string // "" for the zone's SOA
	t0, t1 time.Time
	rcode  int
	addrs  []string
	cnames []string
	serial uint32
}

func (o obs) String() string {
	if o.name == "" {
		return fmt.Sprintf("%s SOA serial %d", o.server, o.serial)
	}
	a := append(slices.Clone(o.addrs), prefixAll("CNAME ", o.cnames)...)
	return fmt.Sprintf("%s %s → %s %v", o.server, o.name, dns.RcodeToString[o.rcode], a)
}

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = p + v
	}
	return out
}

// watcher asks every server, every 20 ms, for every name the walk ever
// configured (A over UDP) and for the zone's SOA.
type watcher struct {
	mu      sync.Mutex
	seen    []obs
	checked int
	stop    chan struct{}
	wg      sync.WaitGroup
}

func startWatcher(servers map[string]string, names func() []string) *watcher {
	w := &watcher{stop: make(chan struct{})}
	for server, addr := range servers {
		w.wg.Go(func() {
			c := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-w.stop:
					return
				case <-tick.C:
				}
				for _, n := range append([]string{""}, names()...) {
					m := new(dns.Msg)
					if n == "" {
						m.SetQuestion(tZone, dns.TypeSOA)
					} else {
						m.SetQuestion(n, dns.TypeA)
					}
					t0 := time.Now()
					r, _, err := c.Exchange(m, addr)
					if err != nil {
						continue // no reply: the server is down, not an answer
					}
					if r.Truncated {
						// TC (an RRL slip): "ask over TCP", which a
						// resolver does; not an answer.
						continue
					}
					o := obs{server: server, name: n, t0: t0, t1: time.Now(), rcode: r.Rcode}
					for _, rr := range r.Answer {
						if !strings.EqualFold(rr.Header().Name, m.Question[0].Name) {
							continue // further down a CNAME chain: that name's own answer
						}
						switch rr := rr.(type) {
						case *dns.A:
							o.addrs = append(o.addrs, rr.A.String())
						case *dns.CNAME:
							o.cnames = append(o.cnames, rr.Target)
						case *dns.SOA:
							o.serial = rr.Serial
						}
					}
					if n == "" && len(r.Answer) == 0 {
						continue // no zone (yet): nothing to compare
					}
					sort.Strings(o.addrs)
					w.mu.Lock()
					w.seen = append(w.seen, o)
					w.mu.Unlock()
				}
			}
		})
	}
	return w
}

func (w *watcher) close() {
	close(w.stop)
	w.wg.Wait()
}

// fresh returns what was seen since the last call.
func (w *watcher) fresh() []obs {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen[w.checked:]
	w.checked = len(w.seen)
	return slices.Clone(out)
}

// violation is one broken invariant, reported once per key with the
// number of times it was seen.
type violation struct {
	inv, server, what string
	first             time.Time
	step              int
	count             int
	example           string
}

// checker holds what the checkers remember between steps.
type checker struct {
	w          *walk
	found      map[string]*violation
	order      []string
	lastSerial map[string]uint32
	answered   map[string]bool // servers that have answered the zone once
	recent     map[string]time.Time
}

func newChecker(w *walk) *checker {
	return &checker{w: w, found: map[string]*violation{}, lastSerial: map[string]uint32{}, answered: map[string]bool{}, recent: map[string]time.Time{}}
}

func (c *checker) report(inv, server, what, example string, at time.Time) {
	k := inv + "|" + server + "|" + what
	if inv == "I1" || inv == "I2" {
		c.recent[server] = at
	}
	if v, ok := c.found[k]; ok {
		v.count++
		return
	}
	c.found[k] = &violation{inv: inv, server: server, what: what, first: at, step: len(c.w.steps), count: 1, example: example}
	c.order = append(c.order, k)
	c.w.t.Logf("VIOLATION %s at step %d on %s: %s (%s) at %s", inv, len(c.w.steps), server, what, example, at.UTC().Format("15:04:05.000"))
}

// judgeAnswers applies I1 and I2 (and the I3/I7 serial rules) to every
// reply seen since the last step.
func (c *checker) judgeAnswers() {
	for _, o := range c.w.watch.fresh() {
		if o.name == "" {
			c.checkSerial(o)
			continue
		}
		if o.rcode == dns.RcodeSuccess && (len(o.addrs) > 0 || len(o.cnames) > 0) {
			c.answered[o.server] = true
		}
		g := tGrace[o.server]
		ss, at := c.w.m.window(o.t0.Add(-g), o.t1)
		var inv, why string
		ok := false
		for i, s := range ss {
			inv, why = judge(s, at[i], o)
			if inv != "" && s.Alt != nil {
				// An operator call in flight: the old value may still show.
				if i2, _ := judge(s.Alt, at[i], o); i2 == "" {
					inv = ""
				}
			}
			if inv == "" {
				ok = true
				break
			}
		}
		if ok {
			continue
		}
		if inv == "I2" && c.probesWithdrew(ss, o) {
			// The controller's own probes of live backends timed out
			// (a starved host: load, -race): it withdrew the name as its
			// policy says for addresses that fail. Right by the probes;
			// logged so that a run where it happens often shows it.
			c.w.t.Logf("  excused (probe timeouts in the controller's log): %s", o)
			continue
		}
		if inv == "I2" && !c.answered[o.server] && o.server != "controller" {
			// A node or a secondary that has never served the zone has
			// no copy yet. The controller is held strictly from its
			// first reply: without state DNS opens once every name has
			// an answer (a record keepLast gives none answers its
			// configured addresses) or is withdrawn by the policy.
			continue
		}
		c.report(inv, o.server, why, o.String(), o.t1)
	}
}

// judge says which invariant, if any, o breaks under state s at instant e
// (the earliest instant s was in force within o's grace window).
func judge(s *mState, e time.Time, o obs) (string, string) {
	if o.server != "controller" && (!s.CtlUp || s.Impostor) {
		// The controller is away: a node or a secondary keeps the copy it
		// last took, which may hold anything the controller published;
		// only an address no config ever had is a breach.
		if slices.Contains(o.addrs, tForgedIP) {
			return "I1", fmt.Sprintf("%s answered %s, not one of its addresses", o.name, tForgedIP)
		}
		return "", ""
	}
	r := s.rec(o.name)
	if r == nil {
		// I1: a name the config no longer has answers nothing.
		if len(o.addrs) > 0 || len(o.cnames) > 0 {
			return "I1", fmt.Sprintf("%s answered though removed from the config", o.name)
		}
		return "", ""
	}
	// I1: every address answered is one of the record's, not drained, not
	// in a disabled record, not known dead beyond its detection bound.
	for _, ip := range o.addrs {
		a := r.addr(ip)
		switch {
		case a == nil:
			return "I1", fmt.Sprintf("%s answered %s, not one of its addresses", o.name, ip)
		case a.Drained:
			return "I1", fmt.Sprintf("%s answered drained %s", o.name, ip)
		case r.disabled():
			return "I1", fmt.Sprintf("disabled %s answered %s", o.name, ip)
		case deadTooLong(s, r, a, e, o.server) && !keptLast(s, r, e, o.server):
			return "I1", fmt.Sprintf("%s answered %s, dead beyond its detection bound", o.name, ip)
		}
	}
	withdrawable := (r.disabled() && r.Failover == "") || (s.AllUnhealthy == "failClosed" && !anySettled(s, r, e, o.server))
	// I2: a configured name answers, unless the config or an operator
	// withdrew it.
	if o.rcode != dns.RcodeSuccess || (len(o.addrs) == 0 && len(o.cnames) == 0) {
		if withdrawable {
			return "", ""
		}
		return "I2", fmt.Sprintf("configured %s answered %s", o.name, rcodeWord(o))
	}
	if len(o.cnames) > 0 {
		if o.cnames[0] != r.Failover && !strings.EqualFold(o.cnames[0], r.Failover) {
			return "I1", fmt.Sprintf("%s answered CNAME %s, its failover is %q", o.name, o.cnames[0], r.Failover)
		}
		if inZone(r.Failover) {
			if t := s.rec(r.Failover); strings.EqualFold(r.Failover, tZone) || (t != nil && t.disabled() && strings.EqualFold(t.Failover, r.Name)) {
				return "I2", fmt.Sprintf("%s answered CNAME %s: a loop or the apex, no address at the end", o.name, r.Failover)
			}
		}
		if r.disabled() || anyUnsettled(s, r, e, o.server) {
			return "", ""
		}
		return "I2", fmt.Sprintf("%s withdrawn to its failover while its addresses are healthy", o.name)
	}
	return "", ""
}

func rcodeWord(o obs) string {
	if o.rcode == dns.RcodeSuccess {
		return "NODATA"
	}
	return dns.RcodeToString[o.rcode]
}

func inZone(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), "."+tZone) || strings.EqualFold(name, tZone)
}

// deadTooLong: a's backend has been dead beyond the detection bound, as
// far as server can know (a node or secondary learns only from a running
// controller).
func deadTooLong(s *mState, r *mRec, a *mAddr, e time.Time, server string) bool {
	b := s.Backends[a.Backend]
	if !b.Dead {
		return false
	}
	start := b.Since
	if server == "controller" && !s.CtlDownAt.IsZero() && (s.DownStateBroken || !b.Since.Add(detectionBound(r.Policy)+time.Second).Before(s.CtlDownAt)) {
		// A restarted controller knows of the death only what its state
		// file says. A trusted passing or warning address restarts passing,
		// its thresholds applying from there (README, "Restarts"); the file
		// holds a death the controller detected (a publication saves it),
		// so the bound counts again from the start for a backend that died
		// while it was down, or too shortly before (a second for the save),
		// or with a state directory that could not be written.
		start = later(start, s.CtlUpSince)
	}
	if server != "controller" {
		if !s.CtlUp || s.Impostor {
			return false
		}
		start = later(start, s.CtlUpSince)
	}
	return e.Sub(start) > detectionBound(r.Policy)
}

// keptLast: keepLast with no failover name keeps the last set when no
// address is served (documented; the dead clause of I1 yields to it).
func keptLast(s *mState, r *mRec, e time.Time, server string) bool {
	return r.Failover == "" && s.AllUnhealthy == "keepLast" && !anySettled(s, r, e, server)
}

// settledAt is when a's backend, alive now, is surely seen passing.
func settledAt(s *mState, r *mRec, a *mAddr, server string) time.Time {
	b := s.Backends[a.Backend]
	at := b.Since.Add(recoveryBound(r.Policy))
	if !s.CtlDownAt.IsZero() && !b.Since.Add(recoveryBound(r.Policy)+time.Second).Before(s.CtlDownAt) {
		// Revived while the controller was down, or too shortly before
		// it went down to be seen passing and saved (a recovery bound and
		// a second for the save, as deadTooLong allows a death): the
		// restarted controller, which restores it critical, has to probe
		// it.
		at = later(at, s.CtlUpSince.Add(tStartupBound()+recoveryBound(r.Policy)))
	}
	if server != "controller" || (!a.Added.IsZero() && !a.Added.Before(s.CtlDownAt)) {
		// A node or a secondary hears from the restarted controller; an
		// address new to the config has no history to restore.
		at = later(at, s.CtlUpSince.Add(tStartupBound()+recoveryBound(r.Policy)))
	}
	return at
}

// anySettled: some undrained address is alive and surely seen so.
func anySettled(s *mState, r *mRec, e time.Time, server string) bool {
	if server != "controller" && (!s.CtlUp || s.Impostor) {
		return false // a stale copy may hold anything the controller published
	}
	for i := range r.Addrs {
		a := &r.Addrs[i]
		if !a.Drained && !s.Backends[a.Backend].Dead && !e.Before(settledAt(s, r, a, server)) {
			return true
		}
	}
	return false
}

// anyUnsettled: the failover answer may stand, because no undrained
// address is surely seen passing.
func anyUnsettled(s *mState, r *mRec, e time.Time, server string) bool {
	return !anySettled(s, r, e, server)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// checkSerial: I3, the SOA serial a server shows never goes backwards
// (RFC 1982); on the node an older serial while an impostor holds the
// controller's port is I7 (an older version applied).
func (c *checker) checkSerial(o obs) {
	last, ok := c.lastSerial[o.server]
	c.lastSerial[o.server] = o.serial
	if !ok || int32(o.serial-last) >= 0 {
		return
	}
	inv := "I3"
	if o.server == "node" && c.w.m.cur().Impostor {
		inv = "I7"
	}
	c.report(inv, o.server, "SOA serial went backwards", fmt.Sprintf("%d → %d", last, o.serial), o.t1)
}

// checkI4: every operator call answered 2xx is in force after a restart
// of the controller (its state file untouched by the test).
func (c *checker) checkI4() {
	s := c.w.m.cur()
	if !s.CtlUp {
		return
	}
	for _, r := range s.Recs {
		code, body, err := httpDo("GET", c.w.e.ctlHTTP, "/api/records/"+strings.TrimSuffix(r.Name, "."), "", 5*time.Second)
		if err != nil || code != 200 {
			continue
		}
		for _, a := range r.Addrs {
			if a.Drained && !addrDrained(body, a.IP) {
				c.report("I4", "controller", fmt.Sprintf("drain of %s %s (answered 2xx) lost", r.Name, a.IP), "after the restart the API shows it undrained", time.Now())
			}
		}
		if r.APIDisabled && !strings.Contains(body, `"disabled": true`) {
			c.report("I4", "controller", fmt.Sprintf("disable of %s (answered 2xx) lost", r.Name), "after the restart the API shows it enabled", time.Now())
		}
	}
}

// addrDrained finds the intent of ip in a record view's JSON.
func addrDrained(body, ip string) bool {
	i := strings.Index(body, `"ip": "`+ip+`"`)
	if i < 0 {
		return false
	}
	rest := body[i+1:]
	if j := strings.Index(rest, `"ip": "`); j >= 0 {
		rest = rest[:j]
	}
	return strings.Contains(rest, `"drained": true`)
}

// checkI5: a fresh client gets /healthz (within 3 s: a liveness ceiling,
// not a speed; three tries); with tcp, a fresh DNS-over-TCP query is answered
// (3 tries, as a resolver would).
func (c *checker) checkI5(server, httpAddr, dnsAddr string, tcp bool) {
	// Three tries, as a liveness probe makes (Kubernetes' failureThreshold
	// is 3): a fresh connection arriving while every slot, the eight
	// reserved ones included, is answering a request is closed at once
	// (README, "Under load"); those answers take microseconds, so the
	// next try finds a slot. A port that refuses three in a row is held.
	var code int
	var err error
	for range 3 {
		if code, _, err = httpDo("GET", httpAddr, "/healthz", "", 3*time.Second); err == nil && code == 200 {
			break
		}
	}
	if err != nil || code != 200 {
		_, m, _ := httpDo("GET", httpAddr, "/metrics", "", 3*time.Second)
		c.report("I5", server, "/healthz not served to a fresh client (3 tries)", fmt.Sprint(code, " ", err, " ", compact(grepLines(m, "gslbkit_http_connections_"))), time.Now())
	}
	if !tcp {
		return
	}
	for range 3 {
		if _, err = tcpAnswer(dnsAddr, c.w.m.cur().Recs[0].Name); err == nil {
			return
		}
	}
	c.report("I5", server, "DNS over TCP refused to a fresh client", err.Error(), time.Now())
}

// checkI6: /readyz is 503 and says why while answers differ from what
// the config and the probes say: every server with an I1 or I2 broken in
// the last second, and the conditions the model knows of (state not
// saved, a record the reconciler must refuse). Reports take up to 5 s to
// show (a liveness ceiling).
func (c *checker) checkI6() {
	s := c.w.m.cur()
	want := map[string]string{} // server → why
	// A node or a secondary copies the controller's answers: only the
	// controller is held to name its own divergence; a node's are checked
	// where the walk makes them (checkI7).
	if at, ok := c.recent["controller"]; ok && time.Since(at) < time.Second {
		want["controller"] = "it answers otherwise than the config and the probes say"
	}
	if s.CtlUp && s.StateBroken {
		want["controller"] = "its state file cannot be written"
	}
	if s.CtlUp && s.rec(tMarkerRec) != nil {
		want["controller"] = "its config has a record the reconciler refuses"
	}
	for server, why := range want {
		addr := c.w.e.ctlHTTP
		if server == "node" {
			addr = c.w.e.nodeHTTP
			if !s.NodeUp {
				continue
			}
		} else if !s.CtlUp {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		var code int
		var body string
		for {
			code, body, _ = httpDo("GET", addr, "/readyz", "", 3*time.Second)
			if code == 503 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // polling a real server
		}
		if code != 503 {
			c.report("I6", server, "/readyz ready while "+why, fmt.Sprint(code, " ", compact(body)), time.Now())
		}
	}
}

// checkNodeStale: I6 for a node whose controller has been away for many
// sync intervals (its copy is stale).
func (c *checker) checkNodeStale() {
	if !c.w.m.cur().NodeUp {
		return
	}
	if code, body, err := httpDo("GET", c.w.e.nodeHTTP, "/readyz", "", 3*time.Second); err == nil && code == 200 {
		c.report("I6", "node", "/readyz ready while its controller has been away for 25 sync intervals", fmt.Sprint(code, " ", compact(body)), time.Now())
	}
}

// checkI7 judges the node after an impostor held the controller's port:
// its secret must not have reached the impostor, and it must not answer
// the impostor's data (forged), nor go back to an older version than the
// serial it held before (a rollback round).
func (c *checker) checkI7(im *impostor, forged bool, held uint32) {
	if n := im.secretSeen.Load(); n > 0 {
		c.report("I7", "node", "sent its replication secret in clear text to a process on the controller's port", fmt.Sprintf("%d requests carried it", n), time.Now())
	}
	if now := nodeSerial(c.w.e.nodeDNS); !forged && held != 0 && now != 0 && int32(now-held) < 0 {
		c.report("I7", "node", "applied an older version of the same epoch", fmt.Sprintf("serial %d → %d", held, now), time.Now())
		if code, body, _ := httpDo("GET", c.w.e.nodeHTTP, "/readyz", "", 3*time.Second); code == 200 {
			c.report("I6", "node", "/readyz ready while it answers an older version", fmt.Sprint(code, " ", compact(body)), time.Now())
		}
	}
	if forged {
		for _, r := range c.w.m.cur().Recs {
			got, _ := answer(c.w.e.nodeDNS, r.Name)
			if slices.Contains(got, tForgedIP) {
				c.report("I7", "node", "applied a snapshot from another source than its controller", fmt.Sprintf("%s → %v", r.Name, got), time.Now())
				if code, body, _ := httpDo("GET", c.w.e.nodeHTTP, "/readyz", "", 3*time.Second); code == 200 {
					c.report("I6", "node", "/readyz ready while it answers a forged snapshot", fmt.Sprint(code, " ", compact(body)), time.Now())
				}
				return
			}
		}
	}
}

// checkSurface holds reads to the DNS-rebinding rule (the Host allow-list;
// beside I1–I7): a read naming a foreign Host is refused.
func (c *checker) checkSurface() {
	for _, p := range []string{"/api/status", "/api/records", "/metrics", "/"} {
		code, _, err := httpDo("GET", c.w.e.ctlHTTP, p, "evil.test", 3*time.Second)
		if err == nil && code == 200 {
			c.report("S1", "controller", "read answered 200 for a foreign Host (DNS rebinding)", "GET "+p+" Host: evil.test", time.Now())
		}
	}
}

// summary lists the violations in the order found.
func (c *checker) summary() []string {
	var out []string
	for _, k := range c.order {
		v := c.found[k]
		out = append(out, fmt.Sprintf("%s on %s at step %d (%d×): %s — e.g. %s", v.inv, v.server, v.step, v.count, v.what, v.example))
	}
	return out
}

func compact(s string) string { return strings.Join(strings.Fields(s), " ") }

// probeEvent is one "address state" line of a controller's log.
type probeEvent struct {
	Time    time.Time `json:"time"`
	Msg     string    `json:"msg"`
	Record  string    `json:"record"`
	Address string    `json:"address"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Cause   string    `json:"cause"`
	Detail  string    `json:"detail"`
}

// timedOut: the transition is a probe that got no answer in time, which a
// starved host makes of a live backend (a refused connection is not one).
func (e probeEvent) timedOut() bool {
	return e.Cause == "probe" && e.To == "critical" && strings.Contains(e.Detail, "timeout")
}

// probesWithdrew says whether o's withdrawal (its failover CNAME, or
// nothing under failClosed) is what the controller's probes decided: at
// some instant of o's grace window, in one controller run, every address
// of the record not drained and not dead in the model was critical
// through probe timeouts, as that run's log shows. The model cannot know
// it: it says when a backend is alive, not that a probe reached it in
// time.
func (c *checker) probesWithdrew(ss []*mState, o obs) bool {
	from, to := o.t0.Add(-tGrace[o.server]), o.t1
	for _, s := range ss {
		r := s.rec(o.name)
		if r == nil || !s.CtlUp && o.server == "controller" {
			continue
		}
		withdrawn := len(o.cnames) > 0 && strings.EqualFold(o.cnames[0], r.Failover)
		if len(o.addrs) == 0 && len(o.cnames) == 0 {
			withdrawn = r.Failover == "" && s.AllUnhealthy == "failClosed"
		}
		if !withdrawn {
			continue
		}
		var want []string
		for _, a := range r.Addrs {
			if !a.Drained && !s.Backends[a.Backend].Dead {
				want = append(want, a.IP)
			}
		}
		if len(want) == 0 {
			continue
		}
		prev := ""
		for _, l := range c.w.ctlLogs {
			log := l.String()
			if probeFailedAll(prev, log, r.Name, want, from, to) {
				return true
			}
			prev = log
		}
	}
	return false
}

// probeFailedAll: in one run's log, every address of ips of record name
// was critical through a probe timeout at some instant of [from, to]. An
// address whose probe timed out in the previous run (prev) and that this
// run restored critical (its first line goes from critical) counts as
// failed from the run's start: a restart does not forgive a failure since
// the last pass (README, "Restarts").
func probeFailedAll(prev, log, name string, ips []string, from, to time.Time) bool {
	var evs []probeEvent
	var start time.Time
	for _, line := range strings.Split(log, "\n") {
		var e probeEvent
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		if start.IsZero() {
			start = e.Time
		}
		if e.Msg == "address state" && strings.EqualFold(e.Record, name) {
			evs = append(evs, e)
		}
	}
	failed := map[string]bool{}
	for _, ip := range ips {
		for _, e := range evs {
			if e.Address == ip {
				failed[ip] = e.From == "critical" && timedOutIn(prev, name, ip)
				break
			}
		}
	}
	all := func() bool {
		for _, ip := range ips {
			if !failed[ip] {
				return false
			}
		}
		return true
	}
	var since time.Time // when all became true; zero while false
	if all() {
		since = start
	}
	for _, e := range evs {
		if e.Time.After(to) {
			break
		}
		was := all()
		failed[e.Address] = e.timedOut() || (failed[e.Address] && e.Cause != "probe")
		switch now := all(); {
		case now && !was:
			since = e.Time
		case !now && was:
			if e.Time.After(from) {
				return true // [since, e.Time) meets [from, to]
			}
			since = time.Time{}
		}
	}
	return !since.IsZero() && !since.After(to)
}

// timedOutIn: a probe of ip in record name timed out in log.
func timedOutIn(log, name, ip string) bool {
	for _, line := range strings.Split(log, "\n") {
		var e probeEvent
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "address state" && strings.EqualFold(e.Record, name) &&
			e.Address == ip && e.Cause == "probe" && strings.Contains(e.Detail, "timeout") {
			return true
		}
	}
	return false
}
