package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// probersBenchServer is a minimal HTTP/1.1 server for benchmarks, so that
// the figures are mostly the prober's: it reads the request's header block
// and writes a fixed response, then closes.
func probersBenchServer(b *testing.B) string {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: close\r\n\r\nok healthy")
	return probersTCPServer(b, func(c net.Conn, _ <-chan struct{}) {
		var buf [1024]byte
		n := 0
		for n < len(buf) {
			k, err := c.Read(buf[n:])
			n += k
			if err != nil || bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
				break
			}
		}
		_, _ = c.Write(resp)
	})
}

// BenchmarkHTTPProbe measures one HTTP probe on loopback (server included,
// in the same process), for each engine, with and without body matching.
func BenchmarkHTTPProbe(b *testing.B) {
	addr := probersBenchServer(b)
	for _, engine := range probersEngines {
		for _, match := range []bool{false, true} {
			name := string(engine)
			if match {
				name += "/match"
			}
			b.Run(name, func(b *testing.B) {
				cfg := DefaultHTTPConfig()
				cfg.Engine = engine
				if match {
					cfg.ExpectedResponse = Segments{textPayload("healthy")}
				}
				h, err := NewHTTP(addr, cfg)
				if err != nil {
					b.Fatal(err)
				}
				probersBenchPass(b, h)
			})
		}
	}
}

// BenchmarkHTTPSProbe measures one HTTPS probe (lean engine, ECDSA P-256
// certificate, TLS 1.3) with a full handshake each time and with session
// resumption.
func BenchmarkHTTPSProbe(b *testing.B) {
	ca := probersNewCA(b)
	cert, _, _ := ca.Issue(false, "probe.test")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	for _, resume := range []bool{false, true} {
		name := "full-handshake"
		if resume {
			name = "resumed"
		}
		b.Run(name, func(b *testing.B) {
			cfg := DefaultHTTPConfig()
			cfg.Hostname = "probe.test"
			cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM), DisableResumption: !resume}
			h, err := NewHTTP(srv.Listener.Addr().String(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b.ReportAllocs()
			defer probersReportCPU(b)()
			for b.Loop() {
				if r := h.Probe(ctx); r.Status != Pass {
					b.Fatal(r.Detail)
				}
			}
		})
	}
}

// probersReportCPU starts measuring the process's CPU time (user and
// system); the function it returns reports it per operation as cpu-ns/op,
// a figure that the machine's other load disturbs less than ns/op. The
// in-process server's share is included.
func probersReportCPU(b *testing.B) func() {
	start := probersCPUTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(probersCPUTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func probersCPUTime() time.Duration { return monCPUTime() }

// probersBenchPass runs p once per benchmark iteration (allocations and
// CPU time reported), failing on the first probe that does not pass.
func probersBenchPass(b *testing.B, p Prober) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ReportAllocs()
	defer probersReportCPU(b)()
	for b.Loop() {
		if r := p.Probe(ctx); r.Status != Pass {
			b.Fatal(r.Detail)
		}
	}
}
