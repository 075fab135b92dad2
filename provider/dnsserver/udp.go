package dnsserver

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/internal/dnswire"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// udpBatch is how many datagrams one receive or send system call moves.
const udpBatch = 32

// udpReadBuffer is the UDP socket's receive buffer: about 1,000 small
// queries.
const udpReadBuffer = 1 << 20

// batchConn is what ipv4.PacketConn and ipv6.PacketConn share.
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

type v6Batch struct{ *ipv6.PacketConn }

func (c v6Batch) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	return c.PacketConn.ReadBatch(ms, flags)
}

func (c v6Batch) WriteBatch(ms []ipv4.Message, flags int) (int, error) {
	return c.PacketConn.WriteBatch(ms, flags)
}

// serveUDPPortable answers datagrams on conn with one goroutine per usable
// CPU, each receiving and sending up to udpBatch datagrams per system call
// through Go's poller (recvmmsg and sendmmsg on Linux; one at a time
// elsewhere) and answering from the fast path (Answerer.RespondUDP). It closes conn
// and returns when stop is closed.
func (s *Server) serveUDPPortable(conn *net.UDPConn, stop <-chan struct{}) {
	var bc batchConn
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
		bc = v6Batch{ipv6.NewPacketConn(conn)}
	} else {
		bc = ipv4.NewPacketConn(conn)
	}
	var wg sync.WaitGroup
	for range s.udpWorkers() {
		wg.Go(func() { s.udpLoop(bc) })
	}
	<-stop
	conn.Close()
	wg.Wait()
}

func (s *Server) udpLoop(bc batchConn) {
	in := make([]ipv4.Message, udpBatch)
	out := make([]ipv4.Message, udpBatch)
	inBuf := make([]byte, udpBatch*dnswire.MaxUDP)
	outBuf := make([]byte, udpBatch*dnswire.MaxUDP)
	for i := range in {
		in[i].Buffers = [][]byte{inBuf[i*dnswire.MaxUDP : (i+1)*dnswire.MaxUDP]}
		out[i].Buffers = [][]byte{nil}
	}
	var tally rcodeTally
	for {
		n, err := bc.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Debug("udp receive", "err", err)
			continue
		}
		k := 0
		var now time.Time
		if s.rrl != nil {
			now = time.Now()
		}
		for i := range n {
			ua, ok := in[i].Addr.(*net.UDPAddr)
			if !ok {
				continue
			}
			src, _ := netip.AddrFromSlice(ua.IP)
			src = src.Unmap()
			var reply []byte
			reply = s.answerUDP(in[i].Buffers[0][:in[i].N], outBuf[k*dnswire.MaxUDP:(k+1)*dnswire.MaxUDP:(k+1)*dnswire.MaxUDP], src)
			if s.rrl != nil {
				reply = s.limitUDP(now, src, reply)
			}
			if len(reply) == 0 {
				continue
			}
			tally.count(reply)
			out[k].Buffers[0] = reply
			out[k].Addr = ua
			k++
		}
		// Counted before sending: a client that has its reply finds it
		// in Stats.
		s.stats.add(&tally)
		for off := 0; off < k; {
			m, err := bc.WriteBatch(out[off:k], 0)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				if m > 0 {
					off += m // sent before the one that failed
				}
				if off >= k {
					break
				}
				if errors.Is(err, syscall.EMSGSIZE) {
					// Larger than the interface's MTU: send it truncated
					// rather than fragmented (see dontfrag.go).
					if tc := s.truncateTooBig(out[off].Buffers[0]); tc != nil {
						out[off].Buffers[0] = tc
						continue
					}
				}
				// Skip the datagram that failed (e.g. an unreachable
				// destination) and send the rest.
				s.log.Debug("udp send", "err", err)
				off++
				continue
			}
			off += max(m, 1)
		}
	}
}
