package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/probetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probersTCPServer runs handle for each connection on a loopback listener;
// handle gets a channel closed at cleanup, for servers that hang.
func probersTCPServer(t testing.TB, handle func(c net.Conn, done <-chan struct{})) string {
	return probetest.Serve(t, handle)
}

// probersEcho answers "pong" to "ping", else writes what is given.
func probersPong(reply string) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, done <-chan struct{}) {
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		_, _ = c.Write([]byte(reply))
		<-done
	}
}

func TestTCPEnvoyRules(t *testing.T) {
	ping := textPayload("ping")
	cases := []struct {
		name    string
		handle  func(net.Conn, <-chan struct{})
		cfg     TCPConfig
		timeout time.Duration
		want    Status
		kind    Kind
	}{
		{"Envoy rule 7: empty receive is connect-only", func(net.Conn, <-chan struct{}) {},
			TCPConfig{}, 5 * time.Second, Pass, KindNone},
		{"send without receive passes once sent", func(c net.Conn, _ <-chan struct{}) { _, _ = io.ReadAll(c) },
			TCPConfig{Send: &ping}, 5 * time.Second, Pass, KindNone},
		{"send and receive the expected payload", probersPong("pong"),
			TCPConfig{Send: &ping, Receive: Segments{textPayload("pong")}}, 5 * time.Second, Pass, KindNone},
		{"Envoy rule 8: receive segments in order, not contiguous", probersPong("p-o-n-g"),
			TCPConfig{Send: &ping, Receive: Segments{textPayload("p-"), hexPayload("6e")}}, 5 * time.Second, Pass, KindNone},
		{"Envoy rule 7: a receive mismatch keeps reading until the timeout", probersPong("nope"),
			TCPConfig{Send: &ping, Receive: Segments{textPayload("pong")}}, 300 * time.Millisecond, Fail, KindTimeout},
		{"Envoy rule 6: an unexpected close counts toward the threshold", func(c net.Conn, _ <-chan struct{}) {
			_, _ = c.Write([]byte("po"))
		}, TCPConfig{Receive: Segments{textPayload("pong")}}, 5 * time.Second, Fail, KindReset},
		{"Envoy rule 6: a silent server times out", func(_ net.Conn, done <-chan struct{}) { <-done },
			TCPConfig{Receive: Segments{textPayload("pong")}}, 300 * time.Millisecond, Fail, KindTimeout},
		{"receive split across writes", func(c net.Conn, _ <-chan struct{}) {
			for _, p := range []string{"po", "n", "g"} {
				_, _ = c.Write([]byte(p))
			}
		}, TCPConfig{Receive: Segments{textPayload("pong")}}, 5 * time.Second, Pass, KindNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := probersTCPServer(t, tc.handle)
			p, err := NewTCP(addr, tc.cfg)
			require.NoError(t, err)
			r := p.Probe(probersCtx(t, tc.timeout))
			assert.Equal(t, tc.want, r.Status, "status; detail %q", r.Detail)
			assert.Equal(t, tc.kind, r.Kind, "kind; detail %q", r.Detail)
		})
	}
}

func TestTCPRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	p, err := NewTCP(addr, DefaultTCPConfig())
	require.NoError(t, err)
	r := p.Probe(probersCtx(t, 5*time.Second))
	assert.Equal(t, Fail, r.Status)
	assert.Equal(t, KindRefused, r.Kind, r.Detail)
}

// TestTCPConnectOnlyResets checks HAProxy's close after a completed
// handshake: the server reads ECONNRESET, not a clean end of stream.
func TestTCPConnectOnlyResets(t *testing.T) {
	got := make(chan error, 1)
	addr := probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		got <- err
	})
	p, err := NewTCP(addr, TCPConfig{CompleteHandshake: true})
	require.NoError(t, err)
	require.Equal(t, Pass, p.Probe(probersCtx(t, 5*time.Second)).Status)
	err = <-got
	require.True(t, errors.Is(err, syscall.ECONNRESET), "server saw %v", err)
}

func TestTCPCanceled(t *testing.T) {
	addr := probersTCPServer(t, func(_ net.Conn, done <-chan struct{}) { <-done })
	p, err := NewTCP(addr, TCPConfig{Receive: Segments{textPayload("x")}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan Result)
	go func() { res <- p.Probe(ctx) }()
	cancel()
	select {
	case r := <-res:
		assert.Equal(t, Fail, r.Status)
		assert.Equal(t, KindOther, r.Kind)
	case <-time.After(10 * time.Second):
		t.Fatal("probe did not end on cancel")
	}
}

func TestTCPConfig(t *testing.T) {
	bad := Payload{Type: PayloadHex, Hex: "7"}
	cases := []struct {
		name string
		addr string
		cfg  TCPConfig
		ok   bool
	}{
		{"connect-only", "127.0.0.1:9", TCPConfig{}, true},
		{"port required", "127.0.0.1", TCPConfig{}, false},
		{"port override without a port in the address", "127.0.0.1", TCPConfig{Port: 9}, true},
		{"port out of range", "127.0.0.1:9", TCPConfig{Port: 70000}, false},
		{"bad send", "127.0.0.1:9", TCPConfig{Send: &bad}, false},
		{"bad receive", "127.0.0.1:9", TCPConfig{Receive: Segments{bad}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTCP(tc.addr, tc.cfg)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
	var c TCPConfig
	require.NoError(t, jsonUnmarshal(`{"send":{"type":"Text","text":"ping"},"receive":{"type":"Hex","hex":"706f6e67"}}`, &c))
	require.NoError(t, c.Validate())
	assert.Equal(t, Segments{hexPayload("706f6e67")}, c.Receive)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// BenchmarkTCPProbe measures one connect-only TCP probe on loopback (closed
// with a reset), and one send/receive probe.
func BenchmarkTCPProbe(b *testing.B) {
	addr := probersTCPServer(b, func(c net.Conn, _ <-chan struct{}) {
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err == nil {
			_, _ = c.Write([]byte("pong"))
			_, _ = io.Copy(io.Discard, c)
		}
	})
	ping := textPayload("ping")
	for _, tc := range []struct {
		name string
		cfg  TCPConfig
	}{
		{"connect", TCPConfig{}},
		{"send-receive", TCPConfig{Send: &ping, Receive: Segments{textPayload("pong")}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := NewTCP(addr, tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			probersBenchPass(b, p)
		})
	}
}
