package probe

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// BenchmarkTCPProbe measures one connect-only TCP probe on loopback (closed
// with a reset), and one send/receive probe.
func BenchmarkTCPProbe(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(c, buf); err == nil {
					_, _ = c.Write([]byte("pong"))
					_, _ = io.Copy(io.Discard, c)
				}
			}()
		}
	}()
	defer func() { _ = ln.Close(); <-done }()
	ping := TextPayload("ping")
	for _, tc := range []struct {
		name string
		cfg  TCPConfig
	}{
		{"connect", TCPConfig{}},
		{"send-receive", TCPConfig{Send: &ping, Receive: Segments{TextPayload("pong")}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := NewTCP(ln.Addr().String(), tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b.ReportAllocs()
			defer probersReportCPU(b)()
			for b.Loop() {
				if r := p.Probe(ctx); r.Status != Pass {
					b.Fatal(r.Detail)
				}
			}
		})
	}
}
