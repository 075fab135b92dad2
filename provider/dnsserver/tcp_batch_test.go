package dnsserver

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/miekg/dns"
)

// countingConn counts the reads and writes the server makes.
type countingConn struct {
	net.Conn
	reads, writes atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error)  { c.reads.Add(1); return c.Conn.Read(b) }
func (c *countingConn) Write(b []byte) (int, error) { c.writes.Add(1); return c.Conn.Write(b) }

func tcpFrame(t *testing.T, id uint16, name string) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	m.Id = id
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{byte(len(b) >> 8), byte(len(b))}, b...)
}

// TestServerTCPBatchesPipelinedQueries: queries sent back to back on one
// connection are read together and their replies written together (the
// server used to make two reads and one write per query), in order.
func TestServerTCPBatchesPipelinedQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := NewServer(fastFixture(t), DefaultServerConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		client, server := net.Pipe()
		cc := &countingConn{Conn: server}
		done := make(chan struct{})
		go func() { defer close(done); s.serveConn(&tcpConn{c: cc}) }()
		const n = 100
		var burst []byte
		for i := range n {
			name := "www.example.test."
			if i%3 == 1 {
				name = "nope.example.test."
			}
			burst = append(burst, tcpFrame(t, uint16(i), name)...)
		}
		// A message split across writes is read on.
		go func() {
			_, _ = client.Write(burst[:len(burst)-7])
			_, _ = client.Write(burst[len(burst)-7:])
		}()
		for i := range n {
			var hdr [2]byte
			if _, err := io.ReadFull(client, hdr[:]); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, binary.BigEndian.Uint16(hdr[:]))
			if _, err := io.ReadFull(client, b); err != nil {
				t.Fatal(err)
			}
			m := new(dns.Msg)
			if err := m.Unpack(b); err != nil || m.Id != uint16(i) {
				t.Fatalf("reply %d: id %d, %v", i, m.Id, err)
			}
			if want := map[bool]int{true: dns.RcodeNameError, false: dns.RcodeSuccess}[i%3 == 1]; m.Rcode != want {
				t.Fatalf("reply %d: rcode %d, want %d", i, m.Rcode, want)
			}
		}
		r, w := cc.reads.Load(), cc.writes.Load()
		t.Logf("%d pipelined queries: %d reads, %d writes", n, r, w)
		if r > n/4 || w > n/4 {
			t.Errorf("%d reads and %d writes for %d pipelined queries: not batched", r, w, n)
		}
		client.Close()
		<-done
	})
}

// TestServerTCPTrickleTimesOut: a client that sends one message a byte at
// a time is closed at the idle timeout after the message began (bytes
// trickling in do not extend it), in virtual time.
func TestServerTCPTrickleTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultServerConfig()
		cfg.TCPIdleTimeout = 10 * time.Second
		s, err := NewServer(fastFixture(t), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { defer close(done); s.serveConn(&tcpConn{c: server}) }()
		start := time.Now()
		// One whole query first, so that the trickled one is not the first.
		if _, err := client.Write(tcpFrame(t, 1, "www.example.test.")); err != nil {
			t.Fatal(err)
		}
		var reply [512]byte
		if _, err := client.Read(reply[:]); err != nil {
			t.Fatal(err)
		}
		q := tcpFrame(t, 2, "www.example.test.")
		for _, b := range q[:len(q)-1] {
			if _, err := client.Write([]byte{b}); err != nil {
				break // closed by the server
			}
			time.Sleep(time.Second) // the client's pace (virtual time)
		}
		<-done
		if took := time.Since(start); took > cfg.TCPIdleTimeout+time.Second {
			t.Errorf("closed %v after the trickle began, want within the idle timeout %v", took, cfg.TCPIdleTimeout)
		}
		client.Close()
	})
}

// scriptConn is a net.Conn that reads in, chunk bytes at a time, then
// io.EOF, and collects what is written.
type scriptConn struct {
	in    []byte
	chunk int
	out   bytes.Buffer
}

func (c *scriptConn) Read(b []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.chunk)], c.in)
	c.in = c.in[n:]
	return n, nil
}
func (c *scriptConn) Write(b []byte) (int, error) { return c.out.Write(b) }
func (c *scriptConn) Close() error                { return nil }
func (c *scriptConn) LocalAddr() net.Addr         { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (c *scriptConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzServeTCPStream feeds an arbitrary byte stream, in chunks of any size,
// to one TCP connection: the server must not panic, and what it writes must
// be, in order, the framed replies RespondTCP gives to each whole message
// up to the first one shorter than a DNS header (where it closes).
func FuzzServeTCPStream(f *testing.F) {
	s, err := NewServer(fastFixture(f), DefaultServerConfig(), nil)
	if err != nil {
		f.Fatal(err)
	}
	seed := func(names ...string) []byte {
		var b []byte
		for i, n := range names {
			m := new(dns.Msg)
			m.SetQuestion(n, dns.TypeA)
			m.Id = uint16(i)
			q, _ := m.Pack()
			b = append(b, byte(len(q)>>8), byte(len(q)))
			b = append(b, q...)
		}
		return b
	}
	f.Add(seed("www.example.test.", "nope.example.test.", "dyn.hooks.test."), uint8(7))
	f.Add(seed("www.example.test."), uint8(0))
	f.Add(append(seed("www.example.test."), 0, 5, 1, 2, 3), uint8(255))
	f.Add([]byte{0xFF, 0xFF, 1, 2, 3}, uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		c := &scriptConn{in: append([]byte(nil), stream...), chunk: int(chunk) + 1}
		s.serveConn(&tcpConn{c: c, src: netip.MustParseAddr("127.0.0.1")})
		var want []byte
		for rest := stream; len(rest) >= 2; {
			n := int(binary.BigEndian.Uint16(rest))
			if n < 12 || len(rest) < 2+n {
				break
			}
			if r := s.a.RespondTCP(rest[2:2+n], nil, netip.MustParseAddr("127.0.0.1")); r != nil {
				want = append(want, byte(len(r)>>8), byte(len(r)))
				want = append(want, r...)
			}
			rest = rest[2+n:]
		}
		if !bytes.Equal(c.out.Bytes(), want) {
			t.Fatalf("stream %x in chunks of %d:\nwrote %x\nwant  %x", stream, c.chunk, c.out.Bytes(), want)
		}
	})
}
