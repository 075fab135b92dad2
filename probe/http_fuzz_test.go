package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// probersFuzzServer serves whatever bytes are current to each connection,
// after reading the request, then closes.
type probersFuzzServer struct {
	ln   net.Listener
	mu   sync.Mutex
	resp []byte
	wg   sync.WaitGroup
}

func probersNewFuzzServer(t testing.TB) *probersFuzzServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &probersFuzzServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			resp := s.resp
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				probersReadRequest(c)
				_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				_, _ = c.Write(resp)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *probersFuzzServer) set(b []byte) {
	s.mu.Lock()
	s.resp = b
	s.mu.Unlock()
}

// httpFuzzReplies are raw server replies seeding the HTTP fuzzers.
var httpFuzzReplies = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\n\r\nbody until close",
	"HTTP/1.0 503 Service Unavailable\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X\r\n\r\n1;a=b\r\no\r\n1\r\nk\r\n0\r\nX: y\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: a\r\n  continued\r\n\r\n",
	"HTTP/1.1 200 OK\r\n bad\r\n\r\n",
	"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
	"HTTP/1.1 2000 OK\r\n\r\n",
	"HTTP/1.1 +20 OK\r\n\r\n",
	"HTTP/9.9 200 OK\r\n\r\n",
	"HTTP/1.1 200\n\nok",
	"",
	"garbage",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2 \r\nContent-Length:  2\r\n\r\nok",
	"HTTP/1.1 200\r\n\r\nok",
	"HTTP/1.1  200  OK\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nok",
	"HTTP/1.1 200 OK\r\n: x\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: caf\xc3\xa9\r\n\r\nok",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nbad trailer\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 \t;ext\r\nx\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000001\r\nx\r\n0\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: close, upgrade\r\n\r\nok",
	"HTTP/1.0 101 Switching Protocols\r\nUpgrade: x\r\nConnection: close, Upgrade\r\n\r\nok",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade:\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nok",
	"HTTP/1.1 100 Continue\r\n\r\n",
	"HTTP/1.1 100 Continue\r\nContent-Length: x\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
	"HTTP/1.1 200 " + strings.Repeat("x", 5000) + "\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", 5000) + "\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\n c\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX: a\r\n ",
	"HTTP/1.1 200 OK\r\n\tX: a\r\n\r\nok",
	"HTTP/1.1 099 Odd\r\n\r\nok",
	"HTTP/1.1 -99 Odd\r\n\r\nok",
	"HTTP/1.1 200 OK\r",
	"HTTP/1.1 200 OK\r\n\r",
}

// FuzzHTTPEngines feeds the same raw server response to the lean engine and
// to the net/http reference engine and requires the same classification:
// status, kind and code.
func FuzzHTTPEngines(f *testing.F) {
	seeds := httpFuzzReplies
	for i, s := range seeds {
		f.Add([]byte(s), "ok", uint8(i%3), false)
		f.Add([]byte(s), "", uint8(0), i%2 == 0)
	}
	srv := probersNewFuzzServer(f)
	f.Fuzz(func(t *testing.T, resp []byte, seg string, window uint8, head bool) {
		probersCompareEngines(t, srv, resp, seg, window, head)
	})
}

// FuzzHTTPEnginesHeaders is FuzzHTTPEngines with the response built from
// parts, so the fuzzer mutates header fields and bodies rather than
// breaking the status line: a status code, header lines (a "|" becomes
// CRLF), and a body, optionally sent chunked in pieces of chunk bytes.
func FuzzHTTPEnginesHeaders(f *testing.F) {
	f.Add(uint16(200), "Content-Length: 2", []byte("ok"), uint8(0), "ok", uint8(0))
	f.Add(uint16(503), "Transfer-Encoding: chunked|Trailer: X", []byte("ok then more"), uint8(3), "more", uint8(2))
	f.Add(uint16(100), "X: y", []byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nk"), uint8(0), "k", uint8(0))
	f.Add(uint16(101), "Upgrade: z|Connection: upgrade", []byte("raw"), uint8(0), "raw", uint8(1))
	f.Add(uint16(204), "Content-Length: 9", []byte("ok"), uint8(0), "", uint8(0))
	srv := probersNewFuzzServer(f)
	f.Fuzz(func(t *testing.T, code uint16, hdrs string, body []byte, chunk uint8, seg string, window uint8) {
		var b []byte
		b = append(b, "HTTP/1.1 "...)
		b = append(b, fmt.Sprintf("%03d", code%1000)...)
		b = append(b, " X\r\n"...)
		if hdrs != "" {
			b = append(b, strings.ReplaceAll(hdrs, "|", "\r\n")...)
			b = append(b, "\r\n"...)
		}
		if chunk > 0 {
			b = append(b, "Transfer-Encoding: chunked\r\n\r\n"...)
			for len(body) > 0 {
				n := min(int(chunk), len(body))
				b = append(b, fmt.Sprintf("%x\r\n", n)...)
				b = append(b, body[:n]...)
				b = append(b, "\r\n"...)
				body = body[n:]
			}
			b = append(b, "0\r\n\r\n"...)
		} else {
			b = append(b, "\r\n"...)
			b = append(b, body...)
		}
		probersCompareEngines(t, srv, b, seg, window, false)
	})
}

// probersCompareEngines probes srv serving resp with both engines and
// fails the test when their status, kind or code differ.
func probersCompareEngines(t *testing.T, srv *probersFuzzServer, resp []byte, seg string, window uint8, head bool) {
	srv.set(resp)
	cfg := DefaultHTTPConfig()
	cfg.ExpectedStatuses = Statuses{{Min: 200, Max: 299}}
	cfg.RetriableStatuses = Statuses{{Min: 500, Max: 503}}
	cfg.MatchWindow = int(window) * 4 // 0 = whole body
	if seg != "" {
		cfg.ExpectedResponse = Segments{textPayload(seg)}
	} else if head {
		cfg.Method = http.MethodHead
	}
	var got [2]Result
	for i, engine := range probersEngines {
		cfg.Engine = engine
		h, err := NewHTTP(srv.ln.Addr().String(), cfg)
		if err != nil {
			t.Skip("config not valid:", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got[i] = h.Probe(ctx)
		cancel()
	}
	lean, ref := got[0], got[1]
	if lean.Status != ref.Status || lean.Kind != ref.Kind || lean.Code != ref.Code {
		t.Fatalf("engines disagree on %q (segment %q, window %d, head %v):\n lean:    %v/%v code %d: %s\n nethttp: %v/%v code %d: %s",
			resp, seg, cfg.MatchWindow, head, lean.Status, lean.Kind, lean.Code, lean.Detail,
			ref.Status, ref.Kind, ref.Code, ref.Detail)
	}
}
