package zonetransfer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"
)

func setA(t *testing.T, p *memory.Provider, name, ip string) uint32 {
	t.Helper()
	_, err := p.SetRecords(context.Background(), xfrZone, []libdns.Record{libdns.Address{Name: name, TTL: 30 * time.Second, IP: netip.MustParseAddr(ip)}})
	require.NoError(t, err)
	soa, err := p.SOA(xfrZone)
	require.NoError(t, err)
	return soa.Serial
}

// TestSecondaries runs a real Knot and a real BIND as secondaries of a
// Server with transfers on: each loads the zone by AXFR, serves the new
// serial and answer after a change (NOTIFY, then IXFR from the journal),
// catches up after a restart during which the zone changed twice, and a
// secondary with the wrong key is refused and serves nothing. Required in
// CI (GSLBKIT_REQUIRE_KNOT, GSLBKIT_REQUIRE_BIND); skipped elsewhere
// without knotd or named.
func TestSecondaries(t *testing.T) {
	for _, kind := range []string{"knot", "bind"} {
		t.Run(kind, func(t *testing.T) {
			sec := newSecondary(t, kind, xfrSecret)
			p := xfrProvider(t, 100)
			cfg := xfrConfig()
			cfg.Notify = []string{sec.addr}
			cfg.NotifyTimeout = 200 * time.Millisecond
			srv := startServer(t, p, cfg)
			x := srv.Transfer()
			sec.primary = srv.Addr()
			soa, err := p.SOA(xfrZone)
			require.NoError(t, err)

			sec.start(t)
			d := sec.waitServes(t, soa.Serial, "a1."+xfrZone, "10.0.0.1")
			t.Logf("%s: first load (AXFR of 100 names) served %v after the secondary answered", kind, d)
			require.Equal(t, uint64(0), x.Stats().IXFR)

			serial := setA(t, p, "a1", "192.0.2.1")
			d = sec.waitServes(t, serial, "a1."+xfrZone, "192.0.2.1")
			t.Logf("%s: a change served %v after the write (NOTIFY, IXFR)", kind, d)
			st := x.Stats()
			require.Equal(t, uint64(1), st.IXFR, "the delta went by IXFR: %+v", st)
			// The secondary logs the transfer once it is done, which may
			// be after it answers the new serial.
			require.True(t, sec.log.Wait(10*time.Second, func(log string) bool { return ixfrLogged(kind, log, 103) }),
				"the secondary's log shows an incremental transfer")

			sec.waitSaved(t)
			sec.stop()
			setA(t, p, "a2", "192.0.2.2")
			serial = setA(t, p, "a1", "192.0.2.11")
			sec.start(t)
			d = sec.waitServes(t, serial, "a1."+xfrZone, "192.0.2.11")
			t.Logf("%s: restarted after two changes, caught up in %v", kind, d)
			_, as, err := sec.serves("a2." + xfrZone)
			require.NoError(t, err)
			require.Equal(t, []string{"192.0.2.2"}, as)
			require.Equal(t, uint64(2), x.Stats().IXFR, "the restarted secondary caught up by IXFR")

			// The wrong key: refused, and the secondary has no zone.
			bad := newSecondary(t, kind, "d3JvbmcgIHNlY3JldCB3cm9uZyAgc2VjcmV0IHdyb25n")
			bad.primary = srv.Addr()
			before := x.Stats().BadTSIG
			bad.start(t)
			guard := time.NewTimer(30 * time.Second)
			defer guard.Stop()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for x.Stats().BadTSIG == before {
				select {
				case <-guard.C:
					t.Fatalf("the secondary with the wrong key sent nothing within 30s")
				case <-tick.C:
				}
			}
			_, _, err = bad.serves("a1." + xfrZone)
			require.Error(t, err, "a secondary with the wrong key serves no zone")
		})
	}
}

// ixfrLogged reports whether a secondary's log shows an incremental
// transfer in: Knot names it; BIND logs the size of each transfer, which
// for the last one must be smaller than the zone's AXFR of axfrRecords.
func ixfrLogged(kind, log string, axfrRecords int) bool {
	last := -1
	for _, l := range strings.Split(log, "\n") {
		l = strings.ToLower(l)
		if kind == "knot" && strings.Contains(l, "ixfr, incoming") && strings.Contains(l, "finished") {
			return true
		}
		if i := strings.Index(l, "transfer completed: "); kind == "bind" && i >= 0 {
			var msgs, recs int
			if _, err := fmt.Sscanf(l[i:], "transfer completed: %d messages, %d records", &msgs, &recs); err == nil {
				last = recs
			}
		}
	}
	return last >= 0 && last < axfrRecords
}

// TestSecondaryTransferTimes logs how long a real Knot and a real BIND take
// to serve a change by AXFR and by IXFR, for zones of 100 and 10,000
// names: from the write to the secondary answering the new serial (NOTIFY
// included), and the primary's own time to send the transfer. The journal
// holds one entry, so a change of one RRset goes by IXFR and a change of
// two by AXFR. It reports times; it asserts only that the expected kind of
// transfer was used.
func TestSecondaryTransferTimes(t *testing.T) {
	for _, kind := range []string{"knot", "bind"} {
		for _, n := range []int{100, 10000} {
			t.Run(fmt.Sprintf("%s/%d", kind, n), func(t *testing.T) {
				sec := newSecondary(t, kind, xfrSecret)
				p, err := memory.New(memory.Config{JournalSize: 1})
				require.NoError(t, err)
				require.NoError(t, p.AddZone(xfrZone))
				recs := make([]libdns.Record, n)
				for i := range n {
					recs[i] = libdns.Address{Name: fmt.Sprintf("a%d", i), TTL: 30 * time.Second, IP: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}
				}
				_, err = p.SetRecords(context.Background(), xfrZone, recs)
				require.NoError(t, err)
				logs := &testproc.Buffer{}
				cfg := dnsserver.DefaultServerConfig()
				cfg.Addr = "127.0.0.1:0"
				xcfg := xfrConfig()
				xcfg.Notify = []string{sec.addr}
				xcfg.NotifyTimeout = 200 * time.Millisecond
				log := slog.New(slog.NewJSONHandler(logs, nil))
				x, err := zonetransfer.NewTransfer(p, xcfg, log)
				require.NoError(t, err)
				dsrv, err := dnsserver.NewServer(p, cfg, log)
				require.NoError(t, err)
				require.NoError(t, dsrv.SetTransfer(x))
				runServer(t, dsrv)
				srv := xfrServer{dsrv, x}
				sec.primary = srv.Addr()
				soa, err := p.SOA(xfrZone)
				require.NoError(t, err)

				sec.start(t)
				d := sec.waitServes(t, soa.Serial, "a1."+xfrZone, "10.0.0.1")
				t.Logf("%s, %d names: first load (AXFR) served %v after the secondary answered; primary sent it in %v", kind, n, d, lastTransfer(t, logs, "AXFR"))

				serial := setA(t, p, "a1", "192.0.2.1")
				d = sec.waitServes(t, serial, "a1."+xfrZone, "192.0.2.1")
				require.Equal(t, uint64(1), srv.Transfer().Stats().IXFR)
				t.Logf("%s, %d names: IXFR of one change served %v after the write; primary sent it in %v", kind, n, d, lastTransfer(t, logs, "IXFR"))

				axfrs := srv.Transfer().Stats().AXFR
				_, err = p.SetRecords(context.Background(), xfrZone, []libdns.Record{
					libdns.Address{Name: "a1", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.2")},
					libdns.Address{Name: "a2", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.3")},
				})
				require.NoError(t, err)
				soa, err = p.SOA(xfrZone)
				require.NoError(t, err)
				d = sec.waitServes(t, soa.Serial, "a1."+xfrZone, "192.0.2.2")
				require.Greater(t, srv.Transfer().Stats().AXFR, axfrs)
				t.Logf("%s, %d names: AXFR (the journal does not reach back) served %v after the write; primary sent it in %v", kind, n, d, lastTransfer(t, logs, "AXFR"))
			})
		}
	}
}

// runServer runs srv until the test ends.
func runServer(t *testing.T, srv *dnsserver.Server) {
	t.Helper()
	require.NoError(t, srv.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("server did not stop")
		}
	})
}

// lastTransfer returns the duration the primary logged for its last
// transfer of kind.
func lastTransfer(t *testing.T, logs *testproc.Buffer, kind string) time.Duration {
	t.Helper()
	var d time.Duration
	for _, l := range strings.Split(logs.String(), "\n") {
		var e struct {
			Msg      string        `json:"msg"`
			Kind     string        `json:"kind"`
			Duration time.Duration `json:"duration"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Msg == "zone transfer" && e.Kind == kind {
			d = e.Duration
		}
	}
	return d
}
