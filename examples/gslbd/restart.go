package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

// What a start answers, and when (see README, "Restarts"):
//
//   - With a usable state file, the zone it saved is served at once
//     (records of names the config no longer has removed first, drained
//     addresses too where the name keeps another one, and addresses that
//     restart critical where it keeps one neither drained nor critical:
//     restoredDown), with a serial past the saved one; unless the config has names that zone lacks (added
//     while gslbd was down): it would answer NXDOMAIN for them, so DNS
//     waits as below.
//   - Without one (no stateDir, a first start, a missing, torn, edited or
//     foreign file) the DNS listener is bound but not read, and
//     replication answers 503, until the first publication is in the zone
//     and every name answers there or every address was probed (openable):
//     queries wait in the socket's queue (resolvers retry, or ask another
//     server) instead of getting NXDOMAIN for names the config has. The
//     first publication comes when every address has had its first probe
//     result, or at the startup bound (two of the longest intervals plus
//     that check's timeout). A record that has no answer in the zone and
//     to which the policy gives none (keepLast, no failover name, no
//     address passed) publishes its configured addresses
//     (firstAnswerModelLocked), so no name is left without an answer.
//
// The SOA serial never goes back: a fresh zone starts at the clock
// (seconds since 1970), a restored one at the clock or one past its saved
// serial, whichever is later (RFC 1982), and every change moves it to
// max(old + 1, the clock) (memory.SerialUnixTime, Knot's "unixtime"
// serial policy). So the serial runs ahead of the clock only by a burst of
// more than one change a second, and falls back to it within as many
// seconds; never more than maxSerialLead (serial.go). A start also asks the secondaries it notifies for their serial
// and starts past the highest one that answers (serialPastSecondaries),
// and asks those that did not answer again until each has (secondaryLoop):
// a restart right after such a burst, without a state file or with one
// that could not be written lately, then still moves their serial forward.

// clockSerial is the serial of a zone started at now: its Unix time, never 0.
func clockSerial(now time.Time) uint32 {
	return max(uint32(now.Unix()), 1)
}

// restartSerial is the serial a restored zone restarts at: past the saved
// serial, and at least the clock.
func restartSerial(saved uint32, now time.Time) uint32 {
	c := clockSerial(now)
	if memory.SerialGreater(c, saved) {
		return c
	}
	if next := saved + 1; next != 0 {
		return next
	}
	return 1
}

// secondarySOATimeout bounds the SOA queries of a fresh start to the
// secondaries (all at once; one that does not answer in time is passed
// over).
const secondarySOATimeout = 500 * time.Millisecond

// secondaryRecheck is how often the secondaries that did not answer at the
// start are asked again, until each has answered once (secondaryLoop).
const secondaryRecheck = 5 * time.Second

// serialPastSecondaries asks each secondary (IP:port) for the zone's SOA
// over UDP and moves the zone's serial past the highest serial one holds,
// when that is not behind it (RFC 1982; memory.Provider.AdvanceSerial: no
// record changes, the version moves, so NOTIFY follows). It returns the
// secondaries that did not answer. At the start it runs before DNS opens
// and before anything is published or replicated.
func (c *controller) serialPastSecondaries(addrs []string, timeout time.Duration) (silent []string) {
	serials := make([]uint32, len(addrs))
	answered := make([]bool, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			cl := &dns.Client{Net: "udp", Timeout: timeout}
			m := new(dns.Msg)
			m.SetQuestion(dnsname.Fqdn(c.cfg.Zone), dns.TypeSOA)
			r, _, err := cl.Exchange(m, addr)
			if err != nil {
				return
			}
			answered[i] = true // a secondary without the zone answers too
			if r.Rcode != dns.RcodeSuccess {
				return
			}
			for _, rr := range r.Answer {
				if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(soa.Hdr.Name, dnsname.Fqdn(c.cfg.Zone)) {
					serials[i] = soa.Serial
				}
			}
		})
	}
	wg.Wait()
	for i, addr := range addrs {
		if !answered[i] {
			silent = append(silent, addr)
		}
	}
	soa, err := c.zone.SOA(c.cfg.Zone)
	if err != nil {
		return silent
	}
	high, from := soa.Serial, ""
	for i, s := range serials {
		if s != 0 && !memory.SerialGreater(high, s) && (from == "" || memory.SerialGreater(s, high)) {
			high, from = s, addrs[i]
		}
	}
	if from == "" {
		return silent
	}
	next, moved, err := c.zone.AdvanceSerial(c.cfg.Zone, high)
	if err != nil || !moved {
		return silent
	}
	c.log.Info("a secondary holds a serial not behind the zone's (a burst of changes before a restart without state): moving past it", "secondary", from, "serial", high, "was", soa.Serial, "now", next)
	return silent
}

// secondaryLoop asks the secondaries that did not answer at the start
// again every secondaryRecheck, moving the serial past theirs
// (serialPastSecondaries), until each has answered once or ctx ends: a
// secondary that was away when gslbd restarted without state, after a
// burst that ran the serial ahead of the clock, would otherwise ignore the
// zone until the clock passed its serial and the zone changed.
func (c *controller) secondaryLoop(ctx context.Context) error {
	t := time.NewTicker(secondaryRecheck)
	defer t.Stop()
	for len(c.silentSecondaries) > 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		c.silentSecondaries = c.serialPastSecondaries(c.silentSecondaries, secondarySOATimeout)
	}
	c.log.Info("every secondary has answered since the start")
	return nil
}

// prepareRestored rewrites the saved zone s for this config before it is
// served: records of names the config does not have go, with their owner
// markers; addresses drained per drained (relative name → set of IPs) go
// where their name keeps another address; addresses that restart critical
// per down (see restoredDown) go where their name keeps another that is
// neither drained nor down; a CNAME to another name than the record's
// failover in this config goes (the failover was removed or changed while
// gslbd was down: the name then has no answer, and DNS waits for the
// first publication, see unanswered); and the serial moves forward. It
// returns the names removed.
func prepareRestored(s *memory.Snapshot, cfg Config, drained, down map[string]map[string]bool, now time.Time) []string {
	keep := map[string]bool{"@": true}
	failover := map[string]string{} // relative name → its failover, as a CNAME target
	for _, r := range cfg.Records {
		rel := relName(r.Name, cfg.Zone)
		keep[rel] = true
		keep[record.DefaultMarkerPrefix+"."+rel] = true
		failover[rel] = cnameKey(r.Failover)
	}
	var removed []string
	for i := range s.Zones {
		z := &s.Zones[i]
		left := 0
		addrs := map[string]int{} // not drained
		up := map[string]int{}    // not drained, not down
		for _, r := range z.Records {
			if (r.Type == "A" || r.Type == "AAAA") && keep[r.Name] && !drained[r.Name][r.Data] {
				addrs[r.Name]++
				if !down[r.Name][r.Data] {
					up[r.Name]++
				}
			}
		}
		for _, r := range z.Records {
			addr := r.Type == "A" || r.Type == "AAAA"
			switch {
			case !keep[r.Name]:
				if !slices.Contains(removed, r.Name) {
					removed = append(removed, r.Name)
				}
				continue
			case addr && drained[r.Name][r.Data] && addrs[r.Name] > 0:
				continue
			case addr && down[r.Name][r.Data] && up[r.Name] > 0:
				continue
			case r.Type == "CNAME":
				if f, ok := failover[r.Name]; ok && cnameKey(r.Data) != f {
					continue
				}
			}
			z.Records[left] = r
			left++
		}
		z.Records = z.Records[:left]
		z.SOA.Serial = restartSerial(z.SOA.Serial, now)
	}
	return removed
}

// cnameKey is a CNAME target (or failover name) compared: absolute, lower
// case; "" stays "".
func cnameKey(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToLower(dnsname.Fqdn(name))
}

// restoredDown lists (relative name → set of IPs) the addresses of cfg
// that the state file saved knows and that restart critical
// (restoredInitial): saved critical or recovering, or saved failing (a
// failure since the last pass). The saved zone may still answer them: it
// is the zone as last published, and the file can be written between a
// probe's verdict and the publication that follows it, or during a startup
// hold, which publishes nothing. Served as it is, a chain of restarts each
// shorter than the hold would answer a dead backend for as long as it
// lasts; prepareRestored leaves them out where the name keeps another
// address, as the first publication will.
func restoredDown(cfg Config, saved controllerState, now time.Time) map[string]map[string]bool {
	down := map[string]map[string]bool{}
	for _, spec := range cfg.Records {
		rel := relName(spec.Name, cfg.Zone)
		for _, a := range spec.Addresses {
			ip, err := netip.ParseAddr(a.IP)
			if err != nil {
				continue
			}
			ip = ip.Unmap()
			m, ok := saved.Addresses[targetID(spec.Name, ip)]
			if !ok {
				continue // not in the file: not in its zone either
			}
			if st, _ := restoredInitial(m, ok, saved.SavedAt, now, spec.check.Policy, true); st != probe.Critical {
				continue
			}
			if down[rel] == nil {
				down[rel] = map[string]bool{}
			}
			down[rel][ip.String()] = true
		}
	}
	return down
}

// tracked wraps as's prober to keep as.failingSince: set at the first
// counted failure after a pass (and saved at once, so that a kill -9 the
// instant after does not forget it), cleared by a pass. A local failure
// (probe.KindLocal) says nothing of the target and changes nothing, nor
// does a probe cut short by its context.
func (c *controller) tracked(as *addrState, p probe.Prober) probe.Prober {
	return probe.ProberFunc(func(ctx context.Context) probe.Result {
		r := p.Probe(ctx)
		if !r.Passed() && ctx.Err() != nil {
			// Cut short by its context (the process stopping, the
			// address leaving the config): it says nothing of the
			// target. Counted, the stop's last save would hold a
			// failure, and the next start would restore a passing
			// address critical, its name answering its failover (or
			// nothing) until the first probe.
			return r
		}
		c.noteResult(as, r, time.Now())
		return r
	})
}

// noteResult applies one probe result to as.failingSince (see tracked).
func (c *controller) noteResult(as *addrState, r probe.Result, now time.Time) {
	if !r.Passed() && r.Kind == probe.KindLocal {
		return
	}
	c.mu.Lock()
	began := false
	switch {
	case r.Passed():
		as.failingSince = time.Time{}
	case as.failingSince.IsZero():
		as.failingSince, began = now, true
	}
	c.mu.Unlock()
	if began {
		c.requestSave()
	}
}

// relName is name relative to zone ("@" at the apex).
func relName(name, zone string) string {
	rel := libdns.RelativeName(name, zone)
	if rel == "" {
		return "@"
	}
	return strings.ToLower(rel)
}

// unanswered lists the names of cfg's records that have no answer in the
// zone (a restored zone lacks the names added to the config since it was
// saved).
func (c *controller) unanswered(cfg Config) []string {
	var out []string
	for _, r := range cfg.Records {
		if len(c.answer(context.Background(), r.Name)) == 0 {
			out = append(out, r.Name)
		}
	}
	return out
}

// nameKey is the key of an absolute name in answeredNames.
func nameKey(name string) string { return strings.ToLower(dnsname.Fqdn(name)) }

// answeredNames is the set of names (nameKey) with an A, AAAA or CNAME
// record in the embedded zone.
func (c *controller) answeredNames() map[string]bool {
	out := map[string]bool{}
	recs, err := c.zone.GetRecords(context.Background(), c.cfg.Zone)
	if err != nil {
		return out
	}
	for _, r := range recs {
		switch rr := r.RR(); rr.Type {
		case "A", "AAAA", "CNAME":
			out[nameKey(libdns.AbsoluteName(rr.Name, c.cfg.Zone))] = true
		}
	}
	return out
}

// firstAnswerModelLocked is m with every address of rs that is not drained
// served: the first answer of a record that has never had one and to which
// the policy gives none (keepLast, no failover name, every address
// critical; as Route 53 answers every record of a set none of which is
// healthy). Nothing is yet known dead for longer than a detection bound
// (the bound counts from the start), so I1 holds; keepLast then keeps this
// set as it keeps any last set, until an address passes (rs.unverified,
// first_answer_unverified on /readyz). c.mu is held.
func (c *controller) firstAnswerModelLocked(rs *recState, m failover.Record) failover.Record {
	now := time.Now()
	drained := map[netip.Addr]bool{}
	for _, a := range rs.addrs {
		if a.drainedAt(now) {
			drained[a.ip] = true
		}
	}
	eps := slices.Clone(m.Endpoints)
	for i := range eps {
		if !drained[eps[i].IP] {
			eps[i].Health = failover.Passing
		}
	}
	m.Endpoints = eps
	return m
}

// unverifiedRecords lists the records answering their first, unverified
// answer (see firstAnswerModelLocked).
func (c *controller) unverifiedRecords() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, rs := range c.records {
		if rs.unverified {
			out = append(out, rs.spec.Name)
		}
	}
	return out
}

// answering is closed once the embedded zone holds answers: at once for a
// restored zone, else after the first publication (see above).
func (c *controller) markAnswering() {
	c.answeringOnce.Do(func() { close(c.answering) })
}

// isAnswering reports whether the zone holds answers yet.
func (c *controller) isAnswering() bool {
	select {
	case <-c.answering:
		return true
	default:
		return false
	}
}

// openable reports whether a start without a restored zone may open DNS:
// every record's name has an answer in the zone, or every address has had
// its first probe result (then a name without an answer truly has none to
// give, see README). A publication made at the startup bound with
// addresses not yet probed would otherwise answer NXDOMAIN for their
// names.
func (c *controller) openable() bool {
	all := true
	for _, rs := range c.records {
		if len(c.answer(context.Background(), rs.spec.Name)) == 0 {
			all = false
			break
		}
	}
	if all {
		return true
	}
	for id := range c.byID {
		if st, ok := c.mon.Stats(id); !ok || st.Probes == 0 {
			return false
		}
	}
	return true
}

// gateReplication answers 503 to nodes until the zone holds answers, so a
// node never copies the empty zone of a controller still starting.
func (c *controller) gateReplication(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.isAnswering() {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, apiError{"starting: no answers published yet (waiting for the first probe results)"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// errStateNotSaved wraps the error of a state file that could not be
// written after an operator's action.
var errStateNotSaved = errors.New("the state file could not be written")

// saveNow writes the state file now (nil without StateDir); saveLoop and
// the API's actions share it. A failure is counted, logged and kept for
// /readyz (state_not_saved) until a write succeeds.
func (c *controller) saveNow() error {
	if c.saveReq == nil {
		return nil
	}
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	now := time.Now()
	err := saveState(c.cfg.StateDir, c.stateNow(now))
	c.saveErrMu.Lock()
	defer c.saveErrMu.Unlock()
	if err != nil {
		if c.saveErr == nil {
			c.saveErrSince = now
		}
		c.saveErr = err
		c.log.Error("state file not written", "dir", c.cfg.StateDir, "err", err)
		c.met.stateSaveErrors.Inc()
		return fmt.Errorf("%w in %s: %v", errStateNotSaved, c.cfg.StateDir, err)
	}
	c.saveErr = nil
	c.lastSave = now
	return nil
}

// checkStateDir tries to create and remove a file in dir, so an unwritable
// state directory is on /readyz from the start rather than at the first
// save.
func (c *controller) checkStateDir() {
	if err := probeStateDir(c.cfg.StateDir); err != nil {
		c.saveErrMu.Lock()
		c.saveErr, c.saveErrSince = err, time.Now()
		c.saveErrMu.Unlock()
		c.log.Error("state directory not writable: operator actions will be refused until it is", "dir", c.cfg.StateDir, "err", err)
	}
}

// probeStateDir creates and removes an empty file in dir (no fsync: it
// asks whether a write can be made, not for one to last).
func probeStateDir(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}

// watchStateDir runs between saves (every second): a state directory that
// became unwritable (removed, replaced, made read-only, its file system
// full) is on /readyz (state_not_saved) within a second rather than at the
// next save, up to 10 s later; once it is writable again a save is made at
// once, which clears the problem.
func (c *controller) watchStateDir() {
	c.saveErrMu.Lock()
	failing := c.saveErr != nil
	c.saveErrMu.Unlock()
	err := probeStateDir(c.cfg.StateDir)
	switch {
	case err != nil && !failing:
		c.saveErrMu.Lock()
		c.saveErr, c.saveErrSince = err, time.Now()
		c.saveErrMu.Unlock()
		c.met.stateSaveErrors.Inc()
		c.log.Error("state directory no longer writable: operator actions will be refused until it is", "dir", c.cfg.StateDir, "err", err)
	case err == nil && failing:
		_ = c.saveNow()
	}
}

// addStartChecks registers the /readyz problems of this file: the state
// file not written, the zone not answering yet, and names in the embedded
// zone the config does not have.
func (c *controller) addStartChecks() {
	if c.saveReq != nil {
		c.met.ready.add("state_not_saved", func(time.Time) (bool, string) {
			c.saveErrMu.Lock()
			defer c.saveErrMu.Unlock()
			if c.saveErr == nil {
				return false, ""
			}
			return true, fmt.Sprintf("state not saved: writing the state file in %s fails since %s: %v; drains and disables hold in this process but a restart would forget them, and operator actions are answered 500",
				c.cfg.StateDir, c.saveErrSince.UTC().Format(time.RFC3339), c.saveErr)
		})
	}
	c.met.ready.add("startup_hold", func(time.Time) (bool, string) {
		if !c.holding.Load() || !c.isAnswering() {
			return false, ""
		}
		return true, "starting: serving the restored zone; publishing, and operator actions, wait for every address's first probe result (at most " + startupBound(c.cfg).String() + ")"
	})
	c.met.ready.add("not_answering", func(time.Time) (bool, string) {
		if c.isAnswering() {
			return false, ""
		}
		return true, "starting: no state restored and no answer published yet; DNS and replication wait for the first probe results (at most " + startupBound(c.cfg).String() + ")"
	})
	c.met.ready.add("first_answer_unverified", func(time.Time) (bool, string) {
		names := c.unverifiedRecords()
		if len(names) == 0 {
			return false, ""
		}
		return true, fmt.Sprintf("%d records answer their configured addresses although none has passed a probe since the start (their first answer, kept by keepLast until an address passes; give a record a failover name to answer that instead): %s",
			len(names), strings.Join(names, ", "))
	})
	c.met.ready.add("desired_state_refused", func(time.Time) (bool, string) {
		c.refusedMu.Lock()
		defer c.refusedMu.Unlock()
		if c.refusedErr == nil {
			return false, ""
		}
		return true, "desired state refused, the last good answers stay: " + c.refusedErr.Error()
	})
	names := map[string]bool{}
	for _, r := range c.cfg.Records {
		names[relName(r.Name, c.cfg.Zone)] = true
	}
	c.met.ready.add("names_not_in_config", func(time.Time) (bool, string) {
		recs, err := c.zone.GetRecords(context.Background(), c.cfg.Zone)
		if err != nil {
			return false, ""
		}
		var extra []string
		for _, r := range recs {
			rr := r.RR()
			rel := relName(libdns.AbsoluteName(rr.Name, c.cfg.Zone), c.cfg.Zone)
			if rel == "@" || names[rel] || names[strings.TrimPrefix(rel, record.DefaultMarkerPrefix+".")] {
				continue
			}
			if n := dnsname.Fqdn(rel + "." + c.cfg.Zone); !slices.Contains(extra, n) {
				extra = append(extra, n)
			}
		}
		if len(extra) == 0 {
			return false, ""
		}
		return true, fmt.Sprintf("the embedded zone answers %d names the config does not have: %s", len(extra), strings.Join(extra, ", "))
	})
}

// refused records the outcome of the last Set of the embedded reconciler.
func (c *controller) setRefused(err error) {
	c.refusedMu.Lock()
	c.refusedErr = err
	c.refusedMu.Unlock()
}
