//go:build linux

package probe

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkLoopHTTPSResumed measures one HTTPS check with a resumed TLS 1.3
// session (X25519 only, as the probe-vs-haproxy benchmark offers) through
// the event loop, one after another on one loop, as a Monitor's scheduler
// runs them: a new connection, the resumed handshake, GET / and the reply,
// the close. By default the TLS server runs in the process (its handshakes
// are counted too); with GSLBKIT_BENCH_TLS_ADDR (host:port) and
// GSLBKIT_BENCH_TLS_CA (the server's CA, a PEM file) it probes that server
// instead, for example bench/probe-vs-haproxy's target with -tls -ports 1,
// so that under valgrind's callgrind only the checker's instructions count.
// GSLBKIT_BENCH_TLS_MAX sets TLSConfig.MaxVersion ("1.2": resumed with a
// TLS 1.2 session ticket, no key exchange; the target then needs -tls12):
//
//	GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind \
//	  ./probe.test -test.run '^$' -test.bench 'LoopHTTPSResumed$' -test.benchtime 200x
func BenchmarkLoopHTTPSResumed(b *testing.B) {
	cfg := DefaultHTTPConfig()
	cfg.TLS = &TLSConfig{Curves: []string{"X25519"}, MaxVersion: os.Getenv("GSLBKIT_BENCH_TLS_MAX")}
	addr := os.Getenv("GSLBKIT_BENCH_TLS_ADDR")
	if addr != "" {
		pem, err := os.ReadFile(os.Getenv("GSLBKIT_BENCH_TLS_CA"))
		require.NoError(b, err)
		cfg.TLS.CAPEM = string(pem)
	} else {
		ca := probersNewCA(b)
		cert, _, _ := ca.Issue(false, "probe.test")
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, CurvePreferences: []tls.CurveID{tls.X25519}}
		srv.StartTLS()
		defer srv.Close()
		addr = srv.Listener.Addr().String()
		cfg.Hostname = "probe.test"
		cfg.TLS.CAPEM = string(ca.PEM)
	}
	h, err := NewHTTP(addr, cfg)
	require.NoError(b, err)
	lt, ok := loopTargetOf(h)
	require.True(b, ok)
	lp, err := newEvLoop()
	require.NoError(b, err)
	defer lp.close()
	mt := &monTarget{id: "t"}
	check := func() {
		now := time.Now()
		lp.start(loopJob{t: mt, lt: lt, start: now, timeout: time.Minute}, now)
		for lp.inFlight() > 0 {
			until, has := lp.next()
			lp.wait(now, until, until.Add(loopTick), has)
		}
		if d := lp.takeDone(); len(d) != 1 || d[0].r.Status != Pass {
			b.Fatalf("%+v", d)
		}
	}
	check() // the full handshake, whose session the others resume
	b.ReportAllocs()
	defer probersReportCPU(b)()
	for b.Loop() {
		check()
	}
}
