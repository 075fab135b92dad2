package main

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/memory"
)

// TestConfigRefusesUnanswerableNames: a record named like an owner marker
// (the reconciler refuses the whole desired state at run time, so every
// name would answer NXDOMAIN) and failover names that cannot answer (the
// apex, a name of the zone that is no record, a loop) are refused at load,
// with the field and the reason.
func TestConfigRefusesUnanswerableNames(t *testing.T) {
	rec := func(name, failover string) string {
		s := "  - name: " + name + "\n"
		if failover != "" {
			s += "    failover: " + failover + "\n"
		}
		return s + "    addresses: [{ip: 192.0.2.1}]\n"
	}
	for _, tc := range []struct{ name, records, want string }{
		{"marker-named record", rec("_gslb-owner.x.example.test.", ""), `records[0].name = "_gslb-owner.x.example.test.": allowed a name whose first label is not _gslb-owner`},
		{"marker at the zone's top", rec("_gslb-owner.example.test.", ""), `records[0].name = "_gslb-owner.example.test."`},
		{"record where relocated pools live", rec("x.pool-gslb.example.test.", ""), `records[0].name = "x.pool-gslb.example.test.": allowed a name not below pool-gslb.example.test.`},
		{"relocated pool too long", rec(strings.Repeat("a", 63)+"."+strings.Repeat("b", 63)+"."+strings.Repeat("c", 63)+"."+strings.Repeat("d", 48)+".example.test.", ""), "allowed a name whose relocated pool"},
		{"failover to the apex", rec("a.example.test.", "example.test."), `records[0].failover = "example.test.": allowed a name other than the zone's apex`},
		{"failover to itself", rec("a.example.test.", "a.example.test."), `records[0] = "a.example.test.": allowed a DNS name: dot-separated labels`},
		{"failover loop of two", rec("a.example.test.", "b.example.test.") + rec("b.example.test.", "a.example.test."), "a.example.test. → b.example.test. → a.example.test."},
		{"failover loop of three", rec("a.example.test.", "b.example.test.") + rec("b.example.test.", "c.example.test.") + rec("c.example.test.", "a.example.test."), "a.example.test. → b.example.test. → c.example.test. → a.example.test."},
		{"failover to no record of the zone", rec("a.example.test.", "nothing.example.test."), `records[0].failover = "nothing.example.test.": allowed a name outside the zone example.test., or one of its records`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte("zone: example.test.\nrecords:\n" + tc.records))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
	// A chain without a loop is fine: a fails over to b, b outside.
	cfg, err := ParseConfig([]byte("zone: example.test.\nrecords:\n" + rec("a.example.test.", "b.example.test.") + rec("b.example.test.", "b.backup.example.net.")))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a chain without a loop: %v", err)
	}
}

// TestRefusedDesiredStateIsAProblem: when the reconciler refuses the
// desired state (here a record renamed behind validation's back), the
// embedded zone keeps its last good answers and /readyz says why.
func TestRefusedDesiredStateIsAProblem(t *testing.T) {
	c := newTestController(t, apiYAML)
	const name = "app.example.test."
	before := zoneAnswer(c.zone, name)
	if len(before) != 3 {
		t.Fatalf("before: %v", before)
	}
	c.records[0].spec.Name = "_gslb-owner.app.example.test."
	c.publish()
	reconcile(t, c)
	if got := zoneAnswer(c.zone, name); !slices.Equal(got, before) {
		t.Fatalf("after a refused desired state the zone answers %v, before %v", got, before)
	}
	rec := do(c.handler(), "GET", "/readyz", nil)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "desired_state_refused") {
		t.Fatalf("/readyz: %d %s", rec.Code, rec.Body.String())
	}
}

// TestDrainResponseAndZoneAgree: a drain is answered after the embedded
// zone stopped answering the address, so the response's answer no longer
// lists it (it used to: the reconcile came after the response).
func TestDrainResponseAndZoneAgree(t *testing.T) {
	c := newTestController(t, apiYAML)
	code, res, body := act(t, c.handler(), "/api/records/app.example.test/addresses/192.0.2.1/drain", "")
	if code != http.StatusOK {
		t.Fatalf("drain: %d %s", code, body)
	}
	if slices.Contains(res.Answer, "A 192.0.2.1") || len(res.Answer) != 2 {
		t.Fatalf("the drain's response answers %v", res.Answer)
	}
	if got := zoneAnswer(c.zone, "app.example.test."); slices.Contains(got, "192.0.2.1") {
		t.Fatalf("the zone answers the drained address after the 200: %v", got)
	}
	st, ok, err := loadState(c.cfg.StateDir, c.cfg.Zone, c.cfg.OwnerID)
	if err != nil || !ok || st.Addresses["app.example.test./192.0.2.1"].Drain == nil {
		t.Fatalf("the drain is not in the state file when answered: %v %v %+v", ok, err, st.Addresses)
	}
}

// TestUnsavedActionIsAnError: when the state file cannot be written, an
// operator action is answered 500 saying so, and /readyz lists
// state_not_saved until a write succeeds.
func TestUnsavedActionIsAnError(t *testing.T) {
	c := newTestController(t, apiYAML)
	dir := c.cfg.StateDir
	// Root ignores permissions: a regular file where the directory was
	// makes every write fail, for any user.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, body := act(t, c.handler(), "/api/records/app.example.test/addresses/192.0.2.1/drain", "")
	if code != http.StatusInternalServerError || !strings.Contains(body, "NOT saved") {
		t.Fatalf("drain with an unwritable state directory: %d %s", code, body)
	}
	rec := do(c.handler(), "GET", "/readyz", nil)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "state_not_saved") {
		t.Fatalf("/readyz: %d %s", rec.Code, rec.Body.String())
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, body := act(t, c.handler(), "/api/records/app.example.test/addresses/192.0.2.2/drain", ""); code != http.StatusOK {
		t.Fatalf("drain once the directory is back: %d %s", code, body)
	}
	if rec := do(c.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "state_not_saved") {
		t.Fatalf("/readyz after a successful write: %s", rec.Body.String())
	}
}

// TestRestoredZoneDropsNamesAndMovesTheSerial: a saved zone restored under
// a config that no longer has one of its names serves without it (and
// without its owner marker), and its serial moves past the saved one and
// to at least the clock.
func TestRestoredZoneDropsNamesAndMovesTheSerial(t *testing.T) {
	dir := ownStateDir()
	c := stateController(t, dir)
	allPassing(t, c)
	c.holding.Store(false)
	reconcile(t, c)
	if got := zoneAnswer(c.zone, "www.example.test."); len(got) != 1 {
		t.Fatalf("before: www answers %v", got)
	}
	saved := c.stateNow(time.Now())
	ahead := uint32(time.Now().Unix()) + 1000 // a serial ahead of the clock
	saved.Published.Zones[0].SOA.Serial = ahead
	if err := saveState(dir, saved); err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(stateYAML, "  - name: www.example.test.\n    failover: www.backup.example.net.\n    addresses:\n      - {ip: 192.0.2.7, probeAddr: \"10.0.0.7:80\"}\n", "", 1)
	if y == stateYAML {
		t.Fatal("the record was not removed from the config")
	}
	r := newFakeController(t, y+"stateDir: "+dir+"\n")
	if got := zoneAnswer(r.zone, "www.example.test."); !slices.Equal(got, []string{"NXDOMAIN"}) {
		t.Fatalf("a name removed from the config answers %v after the restart", got)
	}
	for _, rr := range r.zone.Snapshot().Zones[0].Records {
		if strings.Contains(rr.Name, "www") {
			t.Fatalf("the restored zone keeps %+v", rr)
		}
	}
	if got := zoneAnswer(r.zone, "app.example.test."); len(got) != 3 {
		t.Fatalf("app answers %v after the restart", got)
	}
	soa, _ := r.zone.SOA("example.test.")
	if soa.Serial != ahead+1 {
		t.Fatalf("restored serial %d, want one past the saved %d", soa.Serial, ahead)
	}
	if rec := do(r.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "names_not_in_config") {
		t.Fatalf("/readyz: %s", rec.Body.String())
	}
	// A fresh zone starts at the clock.
	f := newFakeController(t, stateYAML)
	fs, _ := f.zone.SOA("example.test.")
	if now := uint32(time.Now().Unix()); fs.Serial < now-5 || fs.Serial > now {
		t.Fatalf("a fresh zone's serial %d, want the clock's %d", fs.Serial, now)
	}
	if got := restartSerial(100, time.Unix(5000, 0)); got != 5000 {
		t.Fatalf("restartSerial(100, clock 5000) = %d", got)
	}
}

// TestRestoredInitialState: a trusted saved state is kept; an address
// nothing trustworthy is known of, or whose probes were failing when the
// file was written, starts critical with its first probe result deciding
// at once.
func TestRestoredInitialState(t *testing.T) {
	pol := probe.RecordService()
	now := time.Now()
	for _, tc := range []struct {
		name      string
		m         addressMemory
		known     bool
		age       time.Duration
		file      bool
		want      probe.State
		firstPass bool
	}{
		{"no file", addressMemory{}, false, 0, false, probe.Critical, true},
		{"trusted passing", addressMemory{State: "passing"}, true, time.Second, true, probe.Passing, false},
		{"trusted warning", addressMemory{State: "warning"}, true, time.Second, true, probe.Critical, true},
		{"trusted passing, failing since", addressMemory{State: "passing", FailingSince: now.Add(-time.Second)}, true, time.Second, true, probe.Critical, true},
		{"trusted critical, failing since", addressMemory{State: "critical", FailingSince: now.Add(-time.Minute)}, true, time.Second, true, probe.Critical, false},
		{"trusted critical", addressMemory{State: "recovery"}, true, time.Second, true, probe.Critical, false},
		{"stale passing", addressMemory{State: "passing"}, true, time.Hour, true, probe.Critical, true},
		{"stale critical", addressMemory{State: "critical"}, true, time.Hour, true, probe.Critical, true},
		{"unknown to the file", addressMemory{}, false, time.Second, true, probe.Critical, true},
	} {
		s, fp := restoredInitial(tc.m, tc.known, now.Add(-tc.age), now, pol, tc.file)
		if s != tc.want || fp != tc.firstPass {
			t.Errorf("%s: %v first pass %v, want %v %v", tc.name, s, fp, tc.want, tc.firstPass)
		}
	}
}

// TestDefaultStateDir: $STATE_DIRECTORY (systemd), else
// $XDG_STATE_HOME/gslbd, else ~/.local/state/gslbd; "stateDir: \"\""
// turns it off, a stateDir left out is the default.
func TestDefaultStateDir(t *testing.T) {
	t.Setenv("STATE_DIRECTORY", "/var/lib/gslbd:/var/lib/other")
	if got := DefaultStateDir(); got != "/var/lib/gslbd" {
		t.Errorf("with STATE_DIRECTORY: %q", got)
	}
	t.Setenv("STATE_DIRECTORY", "")
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if got := DefaultStateDir(); got != "/x/state/gslbd" {
		t.Errorf("with XDG_STATE_HOME: %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/op")
	if got := DefaultStateDir(); got != "/home/op/.local/state/gslbd" {
		t.Errorf("with HOME: %q", got)
	}
	cfg, err := ParseConfig([]byte("zone: example.test.\n"))
	if err != nil || cfg.StateDir != "/home/op/.local/state/gslbd" {
		t.Errorf("left out: %q %v", cfg.StateDir, err)
	}
	cfg, err = ParseConfig([]byte("zone: example.test.\nstateDir: \"\"\n"))
	if err != nil || cfg.StateDir != "" {
		t.Errorf("written empty: %q %v", cfg.StateDir, err)
	}
}

// TestYAMLZeroRule: a field left out takes its default; a zero written
// explicitly is kept where the field gives zero a meaning, and refused with
// the field's path where it does not — never silently replaced.
func TestYAMLZeroRule(t *testing.T) {
	const base = "zone: example.test.\nstyle: relaxed\nrecords:\n  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1}]\n"
	rec := func(field string) string {
		return strings.Replace(base, "    addresses:", "    "+field+"\n    addresses:", 1)
	}
	for _, tc := range []struct {
		name, yaml string
		want       string            // an error containing this, or "" for accepted
		check      func(Config) bool // what an accepted zero means
	}{
		{"ttl left out", base, "", func(c Config) bool { return c.Records[0].TTL.D() == DefaultRecordTTL }},
		{"ttl 0s", rec("ttl: 0s"), "records[0].ttl = 0s: allowed whole seconds in [1s, 24h]", nil},
		{"ttl 0", rec("ttl: 0"), "records[0].ttl", nil},
		{"style empty", strings.Replace(base, "style: relaxed", `style: ""`, 1), `style = "": allowed`, nil},
		{"provider.type empty", base + "provider: {type: \"\"}\n", `provider.type = "": allowed`, nil},
		{"replication.header empty", base + "replication: {header: \"\"}\n", `replication.header = "": allowed`, nil},
		{"http.maxConns 0: from the descriptor limit", base + "http: {maxConns: 0}\n", "", func(c Config) bool { return c.HTTP.MaxConns == 0 }},
		{"http.maxConns -1", base + "http: {maxConns: -1}\n", `http.maxConns = -1`, nil},
		{"http.addr empty", base + "http: {addr: \"\"}\n", `http.addr`, nil},
		{"dns.tcpIdleTimeout 0s", base + "dns: {tcpIdleTimeout: 0s}\n", `dns.tcpIdleTimeout`, nil},
		{"probe interval 0s", base + "probe: {policy: {interval: 0s}}\n", `interval`, nil},
		{"probe timeout 0s", base + "probe: {policy: {timeout: 0s}}\n", `timeout`, nil},
		{"node.interval 0s", base + "node: {interval: 0s}\n", `node.interval (line 6): "0s": allowed a non-zero value`, nil},
		{"monitor.concurrency 0", base + "monitor: {concurrency: 0}\n", `monitor.concurrency (line 6)`, nil},
		{"transfer.notifyRetries 0", base + "transfer: {notifyRetries: 0}\n", `transfer.notifyRetries`, nil},
		{"policy.poolLabel empty", base + "policy: {poolLabel: \"\"}\n", `policy.poolLabel`, nil},
		{"dns.addr empty: no DNS", base + "dns: {addr: \"\"}\n", "", func(c Config) bool { return c.DNS.Addr == "" }},
		{"dns.maxTCPConns 0: from the descriptor limit", base + "dns: {maxTCPConns: 0}\n", "", func(c Config) bool { return c.DNS.MaxTCPConns == 0 }},
		{"stateDir empty: off", base + "stateDir: \"\"\n", "", func(c Config) bool { return c.StateDir == "" }},
		{"weight 0", strings.Replace(base, "{ip: 192.0.2.1}", "{ip: 192.0.2.1, weight: 0}", 1), "", func(c Config) bool { return c.Records[0].Addresses[0].Weight == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && !tc.check(cfg):
				t.Fatalf("the zero was replaced: %+v", cfg)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestReplicationWaitsForAnswers: before its first publication (no state
// restored) a controller answers nodes 503, so a node never copies an
// empty zone, and /readyz says not_answering; afterwards it serves them.
func TestReplicationWaitsForAnswers(t *testing.T) {
	c := newFakeController(t, apiYAML)
	h := c.handler()
	secret := map[string]string{"X-Gslb-Replication-Secret": "0123456789abcdef0123"}
	if rec := do(h, "GET", "/replication/snapshot", secret); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("snapshot before the first publication: %d %s", rec.Code, rec.Body.String())
	}
	if rec := do(h, "GET", "/readyz", nil); !strings.Contains(rec.Body.String(), "not_answering") {
		t.Fatalf("/readyz before the first publication: %s", rec.Body.String())
	}
	allPassing(t, c)
	if rec := do(h, "GET", "/replication/snapshot", secret); rec.Code != http.StatusOK {
		t.Fatalf("snapshot after: %d %s", rec.Code, rec.Body.String())
	}
}

// TestStateDirLostBetweenSavesIsOnReadyz: a state directory that becomes
// unwritable while no save is due is on /readyz (state_not_saved) at the
// next check, without an operator action or the 10 s save, and leaves it
// once writable again.
func TestStateDirLostBetweenSavesIsOnReadyz(t *testing.T) {
	c := newTestController(t, apiYAML)
	dir := c.cfg.StateDir
	c.watchStateDir()
	if rec := do(c.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "state_not_saved") {
		t.Fatalf("/readyz with a writable directory: %s", rec.Body.String())
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.watchStateDir()
	if rec := do(c.handler(), "GET", "/readyz", nil); rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "state_not_saved") {
		t.Fatalf("/readyz once the directory is a file: %d %s", rec.Code, rec.Body.String())
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c.watchStateDir()
	if rec := do(c.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "state_not_saved") {
		t.Fatalf("/readyz once the directory is back: %s", rec.Body.String())
	}
	if _, ok, err := loadState(dir, c.cfg.Zone, c.cfg.OwnerID); err != nil || !ok {
		t.Fatalf("no state file written once the directory is back: %v %v", ok, err)
	}
}

// TestRestoredZoneLackingANewNameWaits: a saved zone restored under a
// config that gained a name since would answer NXDOMAIN for it, so DNS
// and replication wait (not_answering) as on a start without state; a
// config with no new name serves the restored zone at once. (Before: the
// restored zone was served at once, NXDOMAIN for the new name until the
// first publication.)
func TestRestoredZoneLackingANewNameWaits(t *testing.T) {
	dir := ownStateDir()
	c := stateController(t, dir)
	allPassing(t, c)
	c.holding.Store(false)
	reconcile(t, c)
	if err := saveState(dir, c.stateNow(time.Now())); err != nil {
		t.Fatal(err)
	}
	same := newFakeController(t, stateYAML+"stateDir: "+dir+"\n")
	if !same.isAnswering() {
		t.Fatal("a restored zone with every configured name does not answer at once")
	}
	y := stateYAML + "  - name: new.example.test.\n    addresses:\n      - {ip: 192.0.2.9, probeAddr: \"10.0.0.9:80\"}\n"
	r := newFakeController(t, y+"stateDir: "+dir+"\n")
	if !r.restored {
		t.Fatal("the saved zone was not restored")
	}
	if r.isAnswering() {
		t.Fatalf("a restored zone lacking new.example.test. answers at once (new answers %v)", zoneAnswer(r.zone, "new.example.test."))
	}
	if rec := do(r.handler(), "GET", "/readyz", nil); !strings.Contains(rec.Body.String(), "not_answering") {
		t.Fatalf("/readyz: %s", rec.Body.String())
	}
}

// TestRestartDoesNotForgiveFailures: a restart keeps what the probes of the
// process before had seen. A backend that died shortly before a restart
// was saved warning (or still passing, a failure counted below the warning
// threshold); restarting it passing forgave those failures, so restarts
// closer together than its detection time kept it answered for as long as
// they went on, far beyond its detection bound (the torture walk's seed
// 814671741: a wide policy, SIGTERMs for a rollback and a DNS flood, then
// kill -9). And an address saved critical stayed in the restored zone
// until the startup hold ended when the file was written between the
// verdict and the publication.
func TestRestartDoesNotForgiveFailures(t *testing.T) {
	const name = "app.example.test."
	id := func(ip string) string { return name + "/" + ip }
	dir := ownStateDir()
	c := stateController(t, dir)
	allPassing(t, c)
	c.holding.Store(false)
	reconcile(t, c)
	saved := c.stateNow(time.Now())
	for ip, st := range map[string]string{"192.0.2.2": "warning", "192.0.2.3": "critical"} {
		m := saved.Addresses[id(ip)]
		m.State = st
		saved.Addresses[id(ip)] = m
	}
	if err := saveState(dir, saved); err != nil {
		t.Fatal(err)
	}
	r := stateController(t, dir)
	if got := zoneAnswer(r.zone, name); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("restored over a file saying 192.0.2.2 warning and 192.0.2.3 critical, %s answers %v; want [192.0.2.1]", name, got)
	}
	for ip, want := range map[string]probe.State{"192.0.2.1": probe.Passing, "192.0.2.2": probe.Critical, "192.0.2.3": probe.Critical} {
		if got := r.byID[id(ip)].state; got != want {
			t.Errorf("%s restarts %v, want %v", ip, got, want)
		}
	}
}

// TestFailureStreakIsSaved: a failure that leaves the address passing (no
// transition: below the warning threshold) is saved at once, carried over
// the next restart, which does not answer the address before a probe
// passes, and ended by a pass; a local failure says nothing of the target.
func TestFailureStreakIsSaved(t *testing.T) {
	const name = "app.example.test."
	id := func(ip string) string { return name + "/" + ip }
	dir2 := ownStateDir()
	c2 := stateController(t, dir2)
	allPassing(t, c2)
	c2.holding.Store(false)
	reconcile(t, c2)
	a := c2.byID[id("192.0.2.2")]
	select {
	case <-c2.saveReq: // the publication's
	default:
	}
	c2.noteResult(a, probe.Result{Status: probe.Fail, Kind: probe.KindLocal, Detail: "socket: too many open files"}, time.Now())
	if !a.failingSince.IsZero() || len(c2.saveReq) != 0 {
		t.Fatalf("a local failure set failingSince %v (save requested: %d)", a.failingSince, len(c2.saveReq))
	}
	t0 := time.Now().Add(-time.Second).Round(0)
	c2.noteResult(a, probe.Result{Status: probe.Fail, Kind: probe.KindRefused, Detail: "connection refused"}, t0)
	c2.noteResult(a, probe.Result{Status: probe.Fail, Kind: probe.KindRefused, Detail: "connection refused"}, t0.Add(200*time.Millisecond))
	if len(c2.saveReq) != 1 {
		t.Fatal("the first failure of a streak did not ask for a save")
	}
	st := c2.stateNow(time.Now())
	if m := st.Addresses[id("192.0.2.2")]; m.State != "passing" || !m.FailingSince.Equal(t0) {
		t.Fatalf("saved %+v, want passing, failing since %v", m, t0)
	}
	if err := saveState(dir2, st); err != nil {
		t.Fatal(err)
	}
	r2 := stateController(t, dir2)
	if got := zoneAnswer(r2.zone, name); !slices.Equal(got, []string{"192.0.2.1", "192.0.2.3"}) {
		t.Fatalf("restored over a file saying 192.0.2.2 failing since %v, %s answers %v", t0, name, got)
	}
	if m := r2.stateNow(time.Now()).Addresses[id("192.0.2.2")]; !m.FailingSince.Equal(t0) {
		t.Fatalf("the restarted controller saves %+v: the streak since %v is forgotten", m, t0)
	}
	r2.noteResult(r2.byID[id("192.0.2.2")], probe.Result{Status: probe.Pass}, time.Now())
	if m := r2.stateNow(time.Now()).Addresses[id("192.0.2.2")]; !m.FailingSince.IsZero() {
		t.Fatalf("after a pass the file says %+v", m)
	}
}

// TestDisableOfARecordThatLostItsFailoverIsDropped: a disable made through
// the API while the record had a failover name (allowed without force: it
// answers that name) is dropped at a start whose config removed the
// failover name, since kept it would withdraw the name (NXDOMAIN), which
// the API refuses without force; a forced disable holds. The torture
// walk's seed 764586179: disable, edit-failover none, restart → NXDOMAIN
// with /readyz ready.
func TestDisableOfARecordThatLostItsFailoverIsDropped(t *testing.T) {
	const name = "www.example.test."
	noFailover := strings.Replace(stateYAML, "    failover: www.backup.example.net.\n", "", 1)
	if noFailover == stateYAML {
		t.Fatal("the failover name was not removed from the config")
	}
	for _, tc := range []struct {
		name        string
		yaml, body  string
		want        []string
		disabledNow bool
	}{
		{"without force", stateYAML, "", []string{"192.0.2.7"}, false},
		{"forced", noFailover, `{"force": true}`, []string{"NXDOMAIN"}, true},
	} {
		dir := ownStateDir()
		c := newFakeController(t, tc.yaml+"stateDir: "+dir+"\n")
		allPassing(t, c)
		c.holding.Store(false)
		reconcile(t, c)
		if code, _, body := act(t, c.handler(), "/api/records/www.example.test/disable", tc.body); code != http.StatusOK {
			t.Fatalf("%s: disable: %d %s", tc.name, code, body)
		}
		r := newFakeController(t, noFailover+"stateDir: "+dir+"\n")
		allPassing(t, r)
		r.holding.Store(false)
		reconcile(t, r)
		if got := zoneAnswer(r.zone, name); !slices.Equal(got, tc.want) {
			t.Errorf("%s: restarted without a failover name, %s answers %v, want %v", tc.name, name, got, tc.want)
		}
		if got := r.byName[name].disabled; got != tc.disabledNow {
			t.Errorf("%s: disabled after the restart: %v, want %v", tc.name, got, tc.disabledNow)
		}
	}
}

// TestRestoredZoneDropsAStaleFailover: the saved zone answers a record's
// failover (a CNAME: the record was disabled, or its addresses failing);
// the config edited while gslbd was down removed that failover, or
// changed it. The restart must not serve the CNAME to a name the config
// no longer fails over to (I1): it goes, the name has no answer, and DNS
// waits for the first publication as for a name the config gained. Found
// by TestTorture seed 38003 (edit-failover … none, then a restart serving
// the restored zone through its startup hold). Unchanged, it is kept.
func TestRestoredZoneDropsAStaleFailover(t *testing.T) {
	const block = "  - name: www.example.test.\n    failover: www.backup.example.net.\n"
	if !strings.Contains(stateYAML, block) {
		t.Fatal("the fixture changed")
	}
	for _, tc := range []struct {
		name, failover string
		kept           bool
	}{
		{"removed", "", false},
		{"changed", "    failover: other.backup.example.net.\n", false},
		{"unchanged", "    failover: WWW.backup.example.net\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ownStateDir()
			c := stateController(t, dir)
			allPassing(t, c)
			c.holding.Store(false)
			reconcile(t, c)
			saved := c.stateNow(time.Now())
			recs := saved.Published.Zones[0].Records[:0]
			for _, r := range saved.Published.Zones[0].Records {
				if r.Name != "www" {
					recs = append(recs, r)
				}
			}
			saved.Published.Zones[0].Records = append(recs, memory.ZoneRecord{Name: "www", Type: "CNAME", TTL: 30, Data: "www.backup.example.net."})
			if err := saveState(dir, saved); err != nil {
				t.Fatal(err)
			}
			y := strings.Replace(stateYAML, block, "  - name: www.example.test.\n"+tc.failover, 1)
			r := newFakeController(t, y+"stateDir: "+dir+"\n")
			got := zoneAnswer(r.zone, "www.example.test.")
			cname := slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "www.backup.example.net") })
			if cname != tc.kept {
				t.Fatalf("www answers %v after the restart; the CNAME to the old failover kept: %v, want %v", got, cname, tc.kept)
			}
			if r.isAnswering() == !tc.kept {
				t.Fatalf("answering %v at the start: a name without an answer must hold DNS until the first publication", r.isAnswering())
			}
		})
	}
}

// TestCanceledProbeIsNotAFailure: a probe cut short by its context (a
// SIGTERM cancels every probe in flight) is not a failure of the target:
// counted, the stop's last save held a failure since that instant, and
// the next start restored the passing address critical, its name
// answering its failover until the first probe (the torture walk's seed
// 641847236 under a load average of ~20).
func TestCanceledProbeIsNotAFailure(t *testing.T) {
	const name = "app.example.test."
	c := stateController(t, ownStateDir())
	allPassing(t, c)
	c.holding.Store(false)
	reconcile(t, c)
	select {
	case <-c.saveReq: // the publication's
	default:
	}
	a := c.byID[name+"/192.0.2.2"]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := c.tracked(a, probe.ProberFunc(func(context.Context) probe.Result {
		return probe.Result{Status: probe.Fail, Kind: probe.KindOther, Detail: "canceled"}
	}))
	p.Probe(ctx)
	if !a.failingSince.IsZero() || len(c.saveReq) != 0 {
		t.Fatalf("a canceled probe set failingSince %v (save requested: %d)", a.failingSince, len(c.saveReq))
	}
	if m := c.stateNow(time.Now()).Addresses[name+"/192.0.2.2"]; m.State != "passing" || !m.FailingSince.IsZero() {
		t.Fatalf("the stop would save %+v", m)
	}
	p.Probe(context.Background())
	if a.failingSince.IsZero() {
		t.Fatal("a failure with a live context was not counted")
	}
}
