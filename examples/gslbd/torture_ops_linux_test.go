//go:build linux

package main

// The torture test's operations: a table of what the walk may do, each
// with how it picks its arguments (from the walk's seeded random source
// and the model) and how it runs them. A step is "name arg…", so a
// printed step list replays as it ran (-torture.steps).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

type tOp struct {
	name   string
	weight int
	// pick chooses arguments; nil when the operation does not apply now.
	pick func(w *walk, r *rand.Rand) []string
	// run does it; an error wrapping errSkip skips the step.
	run func(w *walk, args []string) error
}

// tOps is the table of operations. Weights are relative.
var tOps = []tOp{
	{"backend-kill", 8, pickBackend(false), func(w *walk, a []string) error { return w.setBackend(atoi(a[0]), backendDead) }},
	{"backend-hang", 3, pickBackend(false), func(w *walk, a []string) error { return w.setBackend(atoi(a[0]), backendHung) }},
	{"backend-revive", 8, pickBackend(true), func(w *walk, a []string) error { return w.setBackend(atoi(a[0]), backendAlive) }},
	{"drain", 6, pickAddr(false), func(w *walk, a []string) error { return w.intent(a[0], a[1], "drain") }},
	{"undrain", 5, pickAddr(true), func(w *walk, a []string) error { return w.intent(a[0], a[1], "undrain") }},
	{"disable", 3, pickRec(func(r *mRec) bool { return !r.disabled() && r.Failover != "" }), func(w *walk, a []string) error { return w.intent(a[0], "", "disable") }},
	{"enable", 3, pickRec(func(r *mRec) bool { return r.APIDisabled }), func(w *walk, a []string) error { return w.intent(a[0], "", "enable") }},
	{"drain-kill9", 2, pickAddr(false), opDrainKill9},
	{"ctl-sigterm", 2, always, func(w *walk, _ []string) error { return w.restartCtl(false, nil) }},
	{"ctl-kill9", 3, always, func(w *walk, _ []string) error { return w.restartCtl(true, nil) }},
	{"node-sigterm", 1, always, func(w *walk, _ []string) error { return w.restartNode(false) }},
	{"node-kill9", 2, always, func(w *walk, _ []string) error { return w.restartNode(true) }},
	{"edit-add", 3, always, opEditAdd},
	{"edit-remove", 3, pickRec(func(*mRec) bool { return true }), opEditRemove},
	{"edit-rename", 2, pickRec(func(*mRec) bool { return true }), opEditRename},
	{"edit-failover", 2, pickFailover, opEditFailover},
	{"edit-policy", 2, pickPolicy, opEditPolicy},
	{"edit-allunhealthy", 1, pickAllUnhealthy, opEditAllUnhealthy},
	{"edit-marker", 1, always, opEditMarker},
	{"state-corrupt", 1, always, opState("corrupt")},
	{"state-truncate", 1, always, opState("truncate")},
	{"state-remove", 1, always, opState("remove")},
	{"state-unwritable", 1, always, opStateUnwritable},
	{"http-idle-flood", 1, always, opHTTPFlood("idle")},
	{"http-slowloris", 1, always, opHTTPFlood("slowloris")},
	{"dns-tcp-flood-lownofile", 1, always, opDNSTCPFlood},
	{"udp-reflection", 1, always, opUDPReflection},
	{"impostor", 1, always, opImpostor},
	{"rollback", 1, pickAddr(false), opRollback},
	{"burst", 1, pickAddr(false), opBurst},
	{"switch-burst", 1, pickRec(func(r *mRec) bool { return !r.disabled() && r.Failover != "" }), opSwitchBurst},
	{"ctl-restart-in-hold", 1, pickAddr(false), opRestartInHold},
	{"ctl-down-35s", 0, always, opCtlDownLong},
	{"restart-on-failure", 0, pickAddr(false), opRestartOnFailure},
	{"observe", 2, always, func(*walk, []string) error {
		time.Sleep(3 * time.Second) // the walk's pace: dead backends pass their detection bound
		return nil
	}},
	{"rebinding", 1, always, func(w *walk, _ []string) error { w.chk.checkSurface(); return nil }},
}

func always(*walk, *rand.Rand) []string { return []string{} }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func pickBackend(dead bool) func(w *walk, r *rand.Rand) []string {
	return func(w *walk, r *rand.Rand) []string {
		s := w.m.cur()
		var c []string
		for _, rec := range s.Recs {
			for _, a := range rec.Addrs {
				if s.Backends[a.Backend].Dead == dead {
					c = append(c, strconv.Itoa(a.Backend))
				}
			}
		}
		if len(c) == 0 {
			return nil
		}
		return []string{c[r.IntN(len(c))]}
	}
}

// pickAddr picks an address to drain (or undrain); a drain keeps another
// undrained address in the record (else the API answers 409).
func pickAddr(drained bool) func(w *walk, r *rand.Rand) []string {
	return func(w *walk, r *rand.Rand) []string {
		s := w.m.cur()
		var c [][]string
		for _, rec := range s.Recs {
			undrained := 0
			for _, a := range rec.Addrs {
				if !a.Drained {
					undrained++
				}
			}
			for _, a := range rec.Addrs {
				if a.Drained == drained && (drained || undrained > 1) {
					c = append(c, []string{rec.Name, a.IP})
				}
			}
		}
		if len(c) == 0 {
			return nil
		}
		return c[r.IntN(len(c))]
	}
}

func pickRec(ok func(*mRec) bool) func(w *walk, r *rand.Rand) []string {
	return func(w *walk, r *rand.Rand) []string {
		s := w.m.cur()
		var c []string
		for i := range s.Recs {
			if ok(&s.Recs[i]) && s.Recs[i].Name != tMarkerRec {
				c = append(c, s.Recs[i].Name)
			}
		}
		if len(c) == 0 {
			return nil
		}
		return []string{c[r.IntN(len(c))]}
	}
}

func pickFailover(w *walk, r *rand.Rand) []string {
	s := w.m.cur()
	if len(s.Recs) < 2 {
		return nil
	}
	i := r.IntN(len(s.Recs))
	j := (i + 1 + r.IntN(len(s.Recs)-1)) % len(s.Recs)
	kinds := []string{"other", "loop", "apex", "none"}
	return []string{s.Recs[i].Name, kinds[r.IntN(len(kinds))], s.Recs[j].Name}
}

func pickPolicy(w *walk, r *rand.Rand) []string {
	a := pickRec(func(*mRec) bool { return true })(w, r)
	if a == nil {
		return nil
	}
	return append(a, []string{"fast", "slow", "wide"}[r.IntN(3)])
}

func pickAllUnhealthy(w *walk, r *rand.Rand) []string {
	return []string{[]string{"keepLast", "failClosed"}[r.IntN(2)]}
}

// What backend-kill, backend-hang and backend-revive make of a backend.
const (
	backendAlive = iota
	backendDead  // its port refuses connections
	// backendHung accepts connections and answers nothing (a deadlocked or
	// frozen application): its probes fail by their timeout, not at once,
	// each holding a connection while it waits. The model takes it as
	// dead from this instant, so I1's checker holds answers to the same
	// detection bound (probe.WorstCaseDetection counts the timeout).
	backendHung
)

// setBackend kills, hangs or revives a backend.
func (w *walk) setBackend(i, to int) error {
	if i < 0 || i >= len(w.e.backends) {
		return fmt.Errorf("backend %d: out of range", i)
	}
	b := w.e.backends[i]
	var err error
	if to == backendHung {
		err = b.setHung()
	} else {
		err = b.setDead(to == backendDead)
	}
	if err != nil {
		return fmt.Errorf("%w: backend %d: %v", errSkip, i, err)
	}
	w.m.change(func(s *mState) { s.Backends[i] = mBackend{Dead: to != backendAlive, Since: time.Now()} })
	return nil
}

// intent calls the API. The server applies an action at some instant
// during the call: while it is in flight the model holds the new value
// with the old one as an alternative (mState.Alt), either of which may
// show; once answered 2xx the new value stands, once refused the old one.
// An action answered 500 "NOT saved" (the state file cannot be written)
// holds in the running process only (README, "HTTP API"): the model
// keeps it until the controller stops, then takes back the value the file
// has (mState.Unsaved).
func (w *walk) intent(name, ip, action string) error {
	if w.ctl == nil {
		return fmt.Errorf("%w: the controller is down", errSkip)
	}
	path := "/api/records/" + strings.TrimSuffix(name, ".")
	if ip != "" {
		path += "/addresses/" + ip
	}
	apply := func(s *mState, action string) {
		r := s.rec(name)
		if r == nil {
			return
		}
		switch action {
		case "drain", "undrain":
			if a := r.addr(ip); a != nil {
				a.Drained = action == "drain"
			}
		case "disable":
			r.APIDisabled = true
		case "enable":
			r.APIDisabled = false
		}
	}
	// value reads what action sets, so that it can be put back.
	value := func(s *mState) (bool, bool) {
		r := s.rec(name)
		if r == nil {
			return false, false
		}
		if ip == "" {
			return r.APIDisabled, true
		}
		if a := r.addr(ip); a != nil {
			return a.Drained, true
		}
		return false, false
	}
	before := w.m.cur()
	w.m.change(func(s *mState) {
		old := s.clone()
		old.Alt = nil
		apply(s, action)
		s.Alt = &old
	})
	code, body, err := httpDo("POST", w.e.ctlHTTP, path+"/"+action, "", 10*time.Second)
	if err == nil && code/100 != 2 {
		w.t.Logf("  %s %s %s: %d %s", action, name, ip, code, lastLines(strings.TrimSpace(body), 1))
	}
	ok := err == nil && code/100 == 2
	unsaved := err == nil && code == 500 && strings.Contains(body, "NOT saved")
	w.m.change(func(s *mState) {
		s.Alt = nil
		switch {
		case unsaved:
			if was, found := value(&before); found && !slices.ContainsFunc(s.Unsaved, func(u mUnsaved) bool { return u.Name == name && u.IP == ip }) {
				s.Unsaved = append(s.Unsaved, mUnsaved{Name: name, IP: ip, Value: was})
			}
		case !ok:
			// Refused: back as it was.
			if was, found := value(&before); found {
				r := s.rec(name)
				if ip == "" {
					r.APIDisabled = was
				} else if a := r.addr(ip); a != nil {
					a.Drained = was
				}
			}
		}
	})
	return err
}

// opDrainKill9 drains and kills the controller the instant the API
// answered 2xx (I4), then restarts it.
func opDrainKill9(w *walk, a []string) error {
	if err := w.intent(a[0], a[1], "drain"); err != nil {
		return err
	}
	return w.restartCtl(true, nil)
}

// stopCtl stops the controller (SIGKILL or SIGTERM).
func (w *walk) stopCtl(kill bool) error {
	var err error
	if kill {
		w.ctl.kill9()
	} else {
		err = w.ctl.term()
	}
	w.ctl = nil
	w.m.change(func(s *mState) {
		s.CtlUp = false
		s.CtlDownAt = time.Now()
		s.DownStateBroken = s.StateBroken
		// What was answered "NOT saved" is forgotten: the file's value
		// comes back with the next start.
		for _, u := range s.Unsaved {
			if r := s.rec(u.Name); r != nil {
				if u.IP == "" {
					r.APIDisabled = u.Value
				} else if a := r.addr(u.IP); a != nil {
					a.Drained = u.Value
				}
			}
		}
		s.Unsaved = nil
	})
	return err
}

// startCtl writes the model's config (the state dir made writable again)
// and starts the controller on it; nofile 0 keeps the test's limit.
func (w *walk) startCtl(nofile int, extra string) error {
	if w.m.cur().StateBroken {
		w.fixStateDir()
	}
	s := w.m.cur()
	if err := os.WriteFile(w.e.cfgPath, []byte(renderConfig(&s, w.e, extra)), 0o600); err != nil {
		return err
	}
	w.keepState()
	p, err := startGslbd("controller", w.e.cfgPath, nofile)
	if err != nil {
		return err
	}
	w.ctl = p
	w.ctlLogs = append(w.ctlLogs, p.stderr)
	w.m.change(func(s *mState) { s.CtlUp = true; s.CtlUpSince = time.Now() })
	return nil
}

// restartCtl stops the controller, applies edit to the model (the config
// change a reload brings: gslbd has no reload, a restart is one), starts
// it again and checks I4.
func (w *walk) restartCtl(kill bool, edit func(s *mState)) error {
	if w.ctl != nil {
		if err := w.stopCtl(kill); err != nil {
			return err
		}
	}
	if edit != nil {
		w.m.change(edit)
	}
	if err := w.startCtl(0, ""); err != nil {
		return err
	}
	w.chk.checkI4()
	return nil
}

func (w *walk) restartNode(kill bool) error {
	if w.node != nil {
		if kill {
			w.node.kill9()
		} else if err := w.node.term(); err != nil {
			return err
		}
	}
	w.node = nil
	w.m.change(func(s *mState) { s.NodeUp = false })
	p, err := startGslbd("node", w.e.nodeCfgPath, 0, "-node")
	if err != nil {
		return err
	}
	w.node = p
	w.m.change(func(s *mState) { s.NodeUp = true })
	return nil
}

// checkConfig runs gslbd -check on the config s would be; an error means
// it is refused (its text says why).
func (w *walk) checkConfig(s *mState, extra string) error {
	path := filepath.Join(w.e.dir, "check.yaml")
	if err := os.WriteFile(path, []byte(renderConfig(s, w.e, extra)), 0o600); err != nil {
		return err
	}
	a := fmt.Sprintf(`["-config",%q,"-check"]`, path)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GSLBD_E2E_ARGS="+a)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s", strings.TrimSpace(string(out)))
	}
	return nil
}

// editConfig applies a config edit: checked with -check first (a refused
// config is the right outcome for some edits, and is not applied), then
// a restart on the new config.
func (w *walk) editConfig(edit func(s *mState)) error {
	s := w.m.cur()
	edit(&s)
	if err := w.checkConfig(&s, ""); err != nil {
		w.t.Logf("  -check refuses the edit (not applied): %v", lastLines(err.Error(), 2))
		return nil
	}
	return w.restartCtl(false, edit)
}

func opEditAdd(w *walk, _ []string) error {
	s := w.m.cur()
	used := map[int]bool{}
	for _, r := range s.Recs {
		for _, a := range r.Addrs {
			used[a.Backend] = true
		}
	}
	var free []int
	for i := range w.e.backends {
		if !used[i] {
			free = append(free, i)
		}
	}
	if len(free) < 2 {
		return fmt.Errorf("%w: no free backends", errSkip)
	}
	w.nameSeq++
	name := fmt.Sprintf("n%d.%s", w.nameSeq, tZone)
	return w.editConfig(func(s *mState) {
		s.Recs = append(s.Recs, mRec{Name: name, Failover: tFailover, Policy: "fast",
			Addrs: []mAddr{{IP: backendIP(free[0]), Backend: free[0], Added: time.Now()}, {IP: backendIP(free[1]), Backend: free[1], Added: time.Now()}}})
		s.Removed = slices.DeleteFunc(s.Removed, func(n string) bool { return n == name })
	})
}

func backendIP(i int) string { return fmt.Sprintf("192.0.2.%d", 10+i) }

func opEditRemove(w *walk, a []string) error {
	if len(w.m.cur().Recs) < 2 {
		return fmt.Errorf("%w: the last record", errSkip)
	}
	return w.editConfig(func(s *mState) {
		s.Recs = slices.DeleteFunc(s.Recs, func(r mRec) bool { return r.Name == a[0] })
		s.Removed = append(s.Removed, a[0])
		for i := range s.Recs {
			if s.Recs[i].Failover == a[0] {
				s.Recs[i].Failover = tFailover
			}
		}
	})
}

func opEditRename(w *walk, a []string) error {
	w.nameSeq++
	to := fmt.Sprintf("n%d.%s", w.nameSeq, tZone)
	return w.editConfig(func(s *mState) {
		if r := s.rec(a[0]); r != nil {
			r.Name = to
			r.APIDisabled = false // intent is per name
			for i := range r.Addrs {
				r.Addrs[i].Drained = false
				r.Addrs[i].Added = time.Now() // a new name: no history
			}
		}
		s.Removed = append(s.Removed, a[0])
	})
}

// opEditFailover points a record's failover elsewhere: another external
// name, a loop with another record, the zone's apex, or none; a loop or
// the apex is then disabled through the API.
func opEditFailover(w *walk, a []string) error {
	name, kind, other := a[0], a[1], a[2]
	err := w.editConfig(func(s *mState) {
		r, o := s.rec(name), s.rec(other)
		if r == nil || o == nil {
			return
		}
		switch kind {
		case "other":
			r.Failover = "alt.example.net."
		case "loop":
			r.Failover, o.Failover = o.Name, r.Name
		case "apex":
			r.Failover = tZone
		case "none":
			r.Failover = ""
			r.APIDisabled = false
		}
	})
	if err != nil || (kind != "loop" && kind != "apex") {
		return err
	}
	want := tZone
	if kind == "loop" {
		want = other
	}
	s := w.m.cur()
	if r := s.rec(name); r == nil || !strings.EqualFold(r.Failover, want) {
		// The edit was refused (-check): nothing to disable. Comparing
		// with tFailover missed a record whose failover an earlier edit
		// had changed (seed 641847236 disabled two records after a
		// refused loop).
		return nil
	}
	if err := w.intent(name, "", "disable"); err != nil {
		return err
	}
	if kind == "loop" {
		return w.intent(other, "", "disable")
	}
	return nil
}

func opEditPolicy(w *walk, a []string) error {
	return w.editConfig(func(s *mState) {
		if r := s.rec(a[0]); r != nil {
			r.Policy = a[1]
		}
	})
}

func opEditAllUnhealthy(w *walk, a []string) error {
	return w.editConfig(func(s *mState) { s.AllUnhealthy = a[0] })
}

// opEditMarker adds a record named like an ownership marker (item 2).
func opEditMarker(w *walk, _ []string) error {
	s := w.m.cur()
	if s.rec(tMarkerRec) != nil {
		return fmt.Errorf("%w: already there", errSkip)
	}
	used := map[int]bool{}
	for _, r := range s.Recs {
		for _, a := range r.Addrs {
			used[a.Backend] = true
		}
	}
	b := -1
	for i := range w.e.backends {
		if !used[i] {
			b = i
			break
		}
	}
	if b < 0 {
		return fmt.Errorf("%w: no free backend", errSkip)
	}
	return w.editConfig(func(s *mState) {
		s.Recs = append(s.Recs, mRec{Name: tMarkerRec, Failover: tFailover, Policy: "fast", Addrs: []mAddr{{IP: backendIP(b), Backend: b, Added: time.Now()}}})
	})
}

// opState kills the controller, damages its state file, and restarts it.
// What the operator did is lost with the file (the model forgets it).
func opState(how string) func(w *walk, _ []string) error {
	return func(w *walk, _ []string) error {
		if w.ctl != nil {
			w.stopCtl(true)
		}
		w.fixStateDir()
		path := filepath.Join(w.e.stateDir, stateFileName)
		data, err := os.ReadFile(path)
		switch how {
		case "remove":
			err = os.Remove(path)
		case "truncate":
			if err == nil {
				err = os.WriteFile(path, data[:len(data)/2], 0o600)
			}
		case "corrupt":
			if err == nil && len(data) > 10 {
				i := len(data) / 3
				data[i] ^= 0x20
				data[i+1] ^= 0x01
				err = os.WriteFile(path, data, 0o600)
			}
		}
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		w.m.change(func(s *mState) {
			for i := range s.Recs {
				s.Recs[i].APIDisabled = false
				for j := range s.Recs[i].Addrs {
					s.Recs[i].Addrs[j].Drained = false
				}
			}
		})
		return w.startCtl(0, "")
	}
}

// opStateUnwritable puts a regular file where the state directory was:
// every save fails until the next restart puts the directory back.
func opStateUnwritable(w *walk, _ []string) error {
	if w.m.cur().StateBroken {
		return fmt.Errorf("%w: already", errSkip)
	}
	if err := os.Rename(w.e.stateDir, w.e.stateDir+".away"); err != nil {
		return err
	}
	if err := os.WriteFile(w.e.stateDir, []byte("not a directory\n"), 0o600); err != nil {
		return err
	}
	w.m.change(func(s *mState) { s.StateBroken = true })
	return nil
}

func (w *walk) fixStateDir() {
	if st, err := os.Stat(w.e.stateDir); err == nil && !st.IsDir() {
		os.Remove(w.e.stateDir)
		os.Rename(w.e.stateDir+".away", w.e.stateDir)
	}
	w.m.change(func(s *mState) { s.StateBroken = false })
}

// opHTTPFlood holds 300 connections to the controller's HTTP port and
// checks I5 meanwhile.
func opHTTPFlood(kind string) func(w *walk, _ []string) error {
	return func(w *walk, _ []string) error {
		if w.ctl == nil {
			return fmt.Errorf("%w: the controller is down", errSkip)
		}
		f := startHTTPFlood(w.e.ctlHTTP, 300, kind)
		defer f.close()
		w.chk.checkI5("controller", w.e.ctlHTTP, w.e.ctlDNS, false)
		return nil
	}
}

// opDNSTCPFlood restarts the controller with 300 descriptors, holds 300
// idle HTTP keep-alive connections and 200 DNS TCP connections, checks
// I5 (HTTP and DNS over TCP), and restarts it with the test's limit.
func opDNSTCPFlood(w *walk, _ []string) error {
	if w.ctl != nil {
		if err := w.stopCtl(false); err != nil {
			return err
		}
	}
	if err := w.startCtl(300, ""); err != nil {
		return err
	}
	hf := startHTTPFlood(w.e.ctlHTTP, 300, "idle")
	df := startFlood(w.e.ctlDNS, 200)
	w.chk.checkI5("controller", w.e.ctlHTTP, w.e.ctlDNS, true)
	df.close()
	hf.close()
	return w.restartCtl(false, nil)
}

// opUDPReflection configures response rate limiting (dns.rrl:
// dnsserver.RRLConfig's fields) and sends 400 queries from one address:
// most must go unanswered or truncated (S2, beside I1–I7). gslbd limits by
// default but exempts loopback, where the walk runs: the exempt list is
// set to a prefix the walk does not use, which replaces that default, so
// 127.0.0.1 is limited. Skipped, with the reason, if gslbd does not know
// the keys.
func opUDPReflection(w *walk, _ []string) error {
	s := w.m.cur()
	extra := "" // the rrl block goes into dns:, see below
	cfg := renderConfig(&s, w.e, extra)
	cfg = strings.Replace(cfg, fmt.Sprintf("dns: {addr: %q}", w.e.ctlDNS), fmt.Sprintf("dns: {addr: %q, rrl: {rate: 5, slip: 2, exempt: [192.0.2.0/24]}}", w.e.ctlDNS), 1)
	path := filepath.Join(w.e.dir, "check.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf(`GSLBD_E2E_ARGS=["-config",%q,"-check"]`, path))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: dns.rrl is unknown to this gslbd: %s", errSkip, lastLines(string(out), 1))
	}
	if w.ctl != nil {
		if err := w.stopCtl(false); err != nil {
			return err
		}
	}
	// As startCtl: the state directory made writable again (after
	// state-unwritable the controller refuses to start on it; seed 39015).
	if w.m.cur().StateBroken {
		w.fixStateDir()
	}
	if err := os.WriteFile(w.e.cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	w.keepState()
	p, err := startGslbd("controller", w.e.cfgPath, 0)
	if err != nil {
		return err
	}
	w.ctl = p
	w.ctlLogs = append(w.ctlLogs, p.stderr)
	w.m.change(func(s *mState) { s.CtlUp = true; s.CtlUpSince = time.Now() })
	c := &dns.Client{Net: "udp", Timeout: 50 * time.Millisecond}
	full := 0
	for range 400 {
		m := new(dns.Msg)
		m.SetQuestion(s.Recs[0].Name, dns.TypeA)
		if r, _, err := c.Exchange(m, w.e.ctlDNS); err == nil && !r.Truncated {
			full++
		}
	}
	if full > 200 {
		w.chk.report("S2", "controller", "UDP reflection from one address fully answered with rrl set", fmt.Sprintf("%d of 400", full), time.Now())
	}
	return w.restartCtl(false, nil)
}

// forge is the controller's snapshot with one address replaced by the
// impostor's and the version moved forward.
func (w *walk) forge() error {
	snap, err := fetchSnapshot(w.e.ctlHTTP, w.e.secret)
	if err != nil {
		return err
	}
	w.forged = snap
	w.forged.Version += 1000
	w.forged.Zones = slices.Clone(snap.Zones)
	for i := range w.forged.Zones {
		recs := slices.Clone(w.forged.Zones[i].Records)
		for j := range recs {
			if recs[j].Type == "A" {
				recs[j].Data = tForgedIP
			}
		}
		w.forged.Zones[i].Records = recs
	}
	return nil
}

// opImpostor: the controller is stopped and another local process takes
// its HTTP port, serving a forged snapshot (item 7).
func opImpostor(w *walk, _ []string) error {
	if w.ctl == nil {
		return fmt.Errorf("%w: the controller is down", errSkip)
	}
	if err := w.forge(); err != nil {
		return fmt.Errorf("%w: %v", errSkip, err)
	}
	return w.impostorRound(w.forged, true)
}

// opRollback: the node syncs version V, then V+2 (a drain and an undrain
// of one address); the controller stops and an impostor serves version V
// again, same epoch (item 7, rollback). The node's serial going back is I7.
func opRollback(w *walk, a []string) error {
	if w.ctl == nil {
		return fmt.Errorf("%w: the controller is down", errSkip)
	}
	old, err := fetchSnapshot(w.e.ctlHTTP, w.e.secret)
	if err != nil {
		return fmt.Errorf("%w: %v", errSkip, err)
	}
	if err := w.intent(a[0], a[1], "drain"); err != nil {
		return err
	}
	if err := w.intent(a[0], a[1], "undrain"); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if n, err := fetchSnapshot(w.e.ctlHTTP, w.e.secret); err == nil && n.Version > old.Version && nodeSerial(w.e.nodeDNS) == snapshotSerial(n) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling the node's copy
	}
	return w.impostorRound(old, false)
}

func snapshotSerial(s memory.Snapshot) uint32 {
	if len(s.Zones) == 0 {
		return 0
	}
	return s.Zones[0].SOA.Serial
}

func nodeSerial(addr string) uint32 {
	c := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(tZone, dns.TypeSOA)
	r, _, err := c.Exchange(m, addr)
	if err != nil || len(r.Answer) == 0 {
		return 0
	}
	if soa, ok := r.Answer[0].(*dns.SOA); ok {
		return soa.Serial
	}
	return 0
}

// opCtlDownLong stops the controller for 35 s, past the 30 s its saved
// address states are trusted, and restarts it (item 8 with failClosed and
// passingThreshold 2). Weight 0: only in a step list (it costs 35 s).
func opCtlDownLong(w *walk, _ []string) error {
	if w.ctl != nil {
		if err := w.stopCtl(false); err != nil {
			return err
		}
	}
	time.Sleep(5 * time.Second) // the outage being simulated, not a wait for an event
	w.chk.checkNodeStale()
	time.Sleep(30 * time.Second)
	return w.startCtl(0, "")
}

func (w *walk) impostorRound(snap memory.Snapshot, forged bool) error {
	held := nodeSerial(w.e.nodeDNS)
	if err := w.stopCtl(false); err != nil {
		return err
	}
	w.m.change(func(s *mState) { s.Impostor = true })
	im, err := startImpostor(w.e.ctlHTTP, w.e.secret, snap)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for im.requests.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling the impostor's counter
	}
	w.chk.judgeAnswers()
	w.chk.checkI7(im, forged, held)
	im.close()
	w.m.change(func(s *mState) { s.Impostor = false })
	return w.restartCtl(false, nil)
}

// opBurst drains and undrains one address 20 times in a row, as fast as
// the API answers (each call a change, fsynced): the serial runs ahead of
// the clock (one more a change under the unixtime policy), and waits until
// the Knot secondary holds the last serial. A restart without a state file
// next (state-remove) must still not present a lower serial (I3): the
// clock alone would, gslbd asks its secondaries.
func opBurst(w *walk, a []string) error {
	if w.ctl == nil {
		return fmt.Errorf("%w: the controller is down", errSkip)
	}
	for range 20 {
		if err := w.intent(a[0], a[1], "drain"); err != nil {
			return err
		}
		if err := w.intent(a[0], a[1], "undrain"); err != nil {
			return err
		}
	}
	ctl := nodeSerial(w.e.ctlDNS)
	w.t.Logf("  serial %d, clock %d", ctl, time.Now().Unix())
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && nodeSerial(w.e.knotAddr) != nodeSerial(w.e.ctlDNS) {
		time.Sleep(50 * time.Millisecond) // polling the secondary's copy
	}
	return nil
}

// opSwitchBurst disables and enables one record 10 times in a row, as
// fast as the API answers: 20 switches between its addresses and its
// failover CNAME, each a write of the embedded zone while the
// reconciler's rate limiter is drained (so a write made in two calls waits
// between them). No version of the zone may hold neither (I2: NODATA on
// the controller, and on a node that copies that version; seed
// 1877470192).
func opSwitchBurst(w *walk, a []string) error {
	for range 10 {
		if err := w.intent(a[0], "", "disable"); err != nil {
			return err
		}
		if err := w.intent(a[0], "", "enable"); err != nil {
			return err
		}
	}
	return nil
}

// opRestartOnFailure kills the backend of one address and restarts the
// controller (SIGTERM) the instant its log shows the address's first
// failure (passing → warning), three times, then once more with kill -9:
// restarts closer together than the detection time. A restart that
// forgave the failures counted before it (a warning address restarting
// passing) kept the dead backend answered for as long as they went on (I1;
// seed 814671741). Weight 0: only in a step list.
func opRestartOnFailure(w *walk, a []string) error {
	s := w.m.cur()
	r := s.rec(a[0])
	if r == nil || r.addr(a[1]) == nil {
		return fmt.Errorf("%w: %s %s is not in the config", errSkip, a[0], a[1])
	}
	if err := w.setBackend(r.addr(a[1]).Backend, backendDead); err != nil {
		return err
	}
	warned := fmt.Sprintf(`"address":%q,"from":"passing","to":"warning"`, a[1])
	for i := range 4 {
		if w.ctl == nil {
			if err := w.startCtl(0, ""); err != nil {
				return err
			}
		}
		log := w.ctlLogs[len(w.ctlLogs)-1]
		deadline := time.Now().Add(3 * time.Second)
		for !strings.Contains(log.String(), warned) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // polling the controller's log
		}
		if err := w.restartCtl(i == 3, nil); err != nil {
			return err
		}
	}
	return nil
}

// opRestartInHold applies a config edit (the record's probe policy,
// fast ↔ wide) by a restart that stops the controller inside the startup
// hold of the start before (SIGTERM the instant it serves, before its
// first probe results), drains an address the instant the new start
// serves (inside its hold: 503 with Retry-After, which changes nothing;
// 2xx if the hold already ended), and kills it with -9 right after the
// answer (I4: a 2xx survives). A stop inside the hold saves a state file
// from restored, unprobed states; the next start must trust no more of it
// than of the file it restored.
func opRestartInHold(w *walk, a []string) error {
	if err := w.restartCtl(false, nil); err != nil {
		return err
	}
	policy, s := "wide", w.m.cur()
	if r := s.rec(a[0]); r != nil && r.Policy == "wide" {
		policy = "fast"
	}
	if err := w.restartCtl(false, func(s *mState) {
		if r := s.rec(a[0]); r != nil {
			r.Policy = policy
		}
	}); err != nil {
		return err
	}
	if err := w.intent(a[0], a[1], "drain"); err != nil {
		return err
	}
	return w.restartCtl(true, nil)
}
