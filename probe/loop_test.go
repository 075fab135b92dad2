package probe

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzLoopVerdict: the event loop judges a reply from the bytes received
// so far, again from the start after each read, and leaves the verdict for
// later while the parser wants more (loopVerdict). Whatever reads the reply
// arrives in (cuts), that must be the lean engine's verdict on the whole
// stream: the same Result, detail included.
func FuzzLoopVerdict(f *testing.F) {
	for i, s := range httpFuzzReplies {
		f.Add([]byte(s), []byte{uint8(i), 3, 200}, i%3 == 0, uint8(i), "", uint8(0))
		f.Add([]byte(s), []byte{1, 1, 1, 1, 1, 1, 1, 1}, false, uint8(i), "ok", uint8(i))
	}
	f.Fuzz(func(t *testing.T, reply, cuts []byte, head bool, end uint8, seg string, window uint8) {
		cfg := DefaultHTTPConfig()
		cfg.ExpectedStatuses = Statuses{{Min: 200, Max: 299}}
		cfg.RetriableStatuses = Statuses{{Min: 500, Max: 503}}
		if seg != "" {
			cfg.ExpectedResponse = Segments{textPayload(seg)}
			cfg.MatchWindow = 1 + int(window)*4
		} else if head {
			cfg.Method = http.MethodHead
		}
		h, err := NewHTTP("127.0.0.1:80", cfg)
		if err != nil {
			t.Skip("config not valid:", err)
		}
		_, ok := loopTargetOf(h)
		require.True(t, ok, "the loop takes this check")
		state := func() *httpLeanState {
			if seg != "" {
				return &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanBufSize), body: make([]byte, httpLeanBufSize)}
			}
			return &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanHeadBufSize)}
		}
		var endErr error = io.EOF
		if end%2 == 1 {
			endErr = syscall.ECONNRESET
		}

		ref := state()
		ref.br.Reset(&loopReplay{data: reply, end: endErr})
		want := ref.exchange(h)

		st := state()
		var rr loopReplay
		var got Result
		ok, pos := false, 0
		for _, c := range cuts {
			if pos += int(c) + 1; pos >= len(reply) {
				break
			}
			if got, ok = h.loopVerdict(st, &rr, reply[:pos], nil); ok {
				break
			}
		}
		if !ok {
			got, ok = h.loopVerdict(st, &rr, reply, endErr)
			require.True(t, ok, "no verdict at the end of the stream")
		}
		require.Equal(t, want, got, "reply %q cut at %v", reply, cuts)
	})
}

// TestLoopRefMatchesTarget: the loopRef a target's record keeps gives back
// what loopTargetOf gives for its prober (IPv4, IPv6 and IPv4-mapped
// addresses, connect-only with and without the held ACK, HTTP and HTTPS),
// and nothing for a prober the loop does not run.
func TestLoopRefMatchesTarget(t *testing.T) {
	tcp := func(addr string, cfg TCPConfig) Prober {
		p, err := NewTCP(addr, cfg)
		require.NoError(t, err)
		return p
	}
	httpP := func(addr string, tlsOn bool) Prober {
		cfg := DefaultHTTPConfig()
		if tlsOn {
			cfg.TLS = &TLSConfig{InsecureSkipVerify: true}
		}
		p, err := NewHTTP(addr, cfg)
		require.NoError(t, err)
		return p
	}
	probers := []Prober{
		tcp("127.1.2.3:20001", TCPConfig{}),
		tcp("[::1]:443", TCPConfig{CompleteHandshake: true}),
		tcp("[::ffff:10.0.0.1]:80", TCPConfig{}),
		httpP("192.0.2.7:8080", false),
		httpP("[2001:db8::1]:8443", true),
		tcp("example.test:80", TCPConfig{}),                                // a host name: a worker's
		tcp("127.0.0.1:7", TCPConfig{Receive: Segments{textPayload("x")}}), // a match: a worker's
		ProberFunc(func(context.Context) Result { return Result{} }),
	}
	for i, p := range probers {
		want, wantOK := loopTargetOf(p)
		r := loopRefOf(p)
		got, ok := r.target(p)
		require.Equal(t, wantOK, ok, "prober %d", i)
		require.Equal(t, want, got, "prober %d", i)
		if h, isHTTP := p.(*HTTP); ok && isHTTP {
			require.Equal(t, h.useTLS, r.flags&loopRefTLS != 0, "prober %d: the HTTPS flag", i)
		}
	}
}
