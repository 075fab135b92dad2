package memory

import (
	"encoding/binary"
	"io"
	"net"
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
