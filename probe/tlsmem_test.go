package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// probersTLSServer is a minimal HTTPS target (answers any request with
// 200, then closes), serving the certificate certs returns for the SNI.
func probersTLSServer(t testing.TB, certs func(sni string) *tls.Certificate) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) { return certs(h.ServerName), nil }}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				tc := tls.Server(c, cfg)
				_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
				probersReadRequest(tc)
				_, _ = io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK")
			}()
		}
	}()
	return ln.Addr().String()
}

// probersHeap returns the bytes of live heap objects after a full
// collection. It collects until the figure stops falling: objects freed
// by a collection can release others only once their cleanups have run
// (crypto/tls's certificate cache removes its entries that way), which
// happens on another goroutine.
func probersHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	for range 20 {
		last := ms.HeapAlloc
		runtime.Gosched()
		runtime.GC() // also clears sync.Pool's victim cache
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc+1024 > last {
			break
		}
	}
	return ms.HeapAlloc
}

// TestHTTPSMemoryPerTarget measures the heap an HTTPS prober keeps per
// target, constructed and after probing (a stored session each), for
// 1,000 targets: verifying against one CA, with every target presenting
// the same certificate or each its own, and without verification. It
// reports the figures and holds them to 8 KiB per target. The figures
// after probing include the in-process server's cache of its private keys
// (about 0.25 KB per target where each has its own certificate).
func TestHTTPSMemoryPerTarget(t *testing.T) {
	n := 1000
	if probersRace {
		n = 100 // crypto is several times slower under the race detector
	}
	ca := probersNewCA(t)
	shared, _, _ := ca.Issue(false, "probe.test")
	own := make(map[string]*tls.Certificate, n)
	for i := range n {
		name := fmt.Sprintf("t%d.probe.test", i)
		c, _, _ := ca.Issue(false, name)
		own[name] = &c
	}
	for _, tc := range []struct {
		name   string
		ownSNI bool // each target its own name and certificate
		tls    TLSConfig
	}{
		{"verified, one certificate for all", false, TLSConfig{CAPEM: string(ca.PEM)}},
		{"verified, a certificate each", true, TLSConfig{CAPEM: string(ca.PEM)}},
		{"insecureSkipVerify, a certificate each", true, TLSConfig{InsecureSkipVerify: true}},
		{"verified, a certificate each, no resumption", true, TLSConfig{CAPEM: string(ca.PEM), DisableResumption: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := probersTLSServer(t, func(sni string) *tls.Certificate {
				if c := own[sni]; c != nil {
					return c
				}
				return &shared
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			base := probersHeap()
			ps := make([]*HTTP, n)
			for i := range ps {
				cfg := DefaultHTTPConfig()
				cfg.Hostname = "probe.test"
				if tc.ownSNI {
					cfg.Hostname = fmt.Sprintf("t%d.probe.test", i)
				}
				c := tc.tls
				cfg.TLS = &c
				h, err := NewHTTP(addr, cfg)
				require.NoError(t, err)
				ps[i] = h
			}
			built := probersHeap()
			for _, h := range ps {
				r := h.Probe(ctx)
				require.Equal(t, Pass, r.Status, r.Detail)
			}
			probed := probersHeap()
			perBuilt := float64(built-base) / float64(n)
			perProbed := float64(int64(probed)-int64(base)) / float64(n)
			t.Logf("%d targets: %.0f B per target constructed, %.0f B after a probe each", n, perBuilt, perProbed)
			runtime.KeepAlive(ps)
			if !probersRace {
				require.LessOrEqual(t, perProbed, 8192.0, "heap bytes per HTTPS target")
			}
		})
	}
}

// TestMonitorHTTPSResumes runs HTTPS probers in a Monitor, their probes
// in the event loop (where it runs) and on the worker goroutines, and checks
// that each target's later handshakes resume its own session.
func TestMonitorHTTPSResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("real network")
	}
	for _, noLoop := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoEventLoop=%v", noLoop), func(t *testing.T) {
			const n, rounds = 4, 3
			ca := probersNewCA(t)
			cert, _, _ := ca.Issue(false, "probe.test")
			mc := DefaultMonitorConfig()
			mc.NoEventLoop = noLoop
			m, err := NewMonitor(mc, nil, nil)
			require.NoError(t, err)
			pol := DefaultPolicy()
			pol.Interval = time.Second // a generous timeout: a probe cut short might not keep its ticket
			pol.Timeout = time.Second
			servers := make([]*probersTLSResumeServer, n)
			for i := range servers {
				servers[i] = probersNewTLSResumeServer(t, cert)
				cfg := DefaultHTTPConfig()
				cfg.Hostname = "probe.test"
				cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
				h, err := NewHTTP(probersAddr(servers[i].Server), cfg)
				require.NoError(t, err)
				_, onLoop := loopTargetOf(h)
				require.True(t, onLoop, "an HTTPS check to an IP address can run in the event loop")
				require.NoError(t, m.Add(Target{ID: fmt.Sprint(i), Prober: h, Policy: pol}))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- m.Run(ctx) }()
			for i, s := range servers {
				var got []bool
				for range rounds {
					select {
					case r := <-s.resumed:
						got = append(got, r)
					case <-ctx.Done():
						t.Fatalf("target %d: %d handshakes seen before the hang guard", i, len(got))
					}
				}
				require.Equal(t, []bool{false, true, true}, got, "target %d: resumed handshakes", i)
			}
			cancel()
			<-done
		})
	}
}
