//go:build linux

package dnsserver_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enterNetns moves the calling goroutine, for good, onto a thread in a new
// network namespace whose loopback interface is up with the given MTU.
// Sockets made by this goroutine from then on live in that namespace
// (whichever thread later reads or writes them). The thread is never
// unlocked, so the runtime ends it with the goroutine. Needs CAP_SYS_ADMIN
// and CAP_NET_ADMIN; the test is skipped without them.
func enterNetns(t *testing.T, mtu int) {
	runtime.LockOSThread()
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		t.Skipf("needs a network namespace of its own (root): %v", err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then a union
	copy(ifr[:], "lo")
	ioctl := func(req uintptr) {
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&ifr[0])))
		require.Zero(t, errno, "ioctl %#x: %v", req, errno)
	}
	*(*int32)(unsafe.Pointer(&ifr[16])) = int32(mtu)
	ioctl(syscall.SIOCSIFMTU)
	ioctl(syscall.SIOCGIFFLAGS)
	*(*uint16)(unsafe.Pointer(&ifr[16])) |= syscall.IFF_UP
	ioctl(syscall.SIOCSIFFLAGS)
}

// usePortableUDP is dnsserver.UsePortableUDP where the raw loop exists.
var usePortableUDP = func(t *testing.T) { t.Skip("no raw UDP loop on this platform: the portable loop is the only one") }

// TestServerDoesNotFragment runs a server whose MaxUDPSize (4096) is above
// what its link carries in one packet (loopback at 1,280 bytes, in a
// network namespace of the test's own) and asks for a 2,000-byte answer
// over UDP with a 4,096-byte EDNS buffer. The server does not fragment the
// reply (before, the kernel cut it into fragments and the client
// reassembled it): the client gets it truncated, with its question and OPT
// record, the server counts it in Stats.UDPTooBig, and the same query over
// TCP gets the whole answer. A reply that fits goes out whole as before.
// Both UDP loops: the raw one and the portable one.
func TestServerDoesNotFragment(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		portable   bool
	}{{"ipv4", "127.0.0.1", false}, {"ipv6", "::1", false}, {"ipv4-portable-loop", "127.0.0.1", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.portable {
				usePortableUDP(t)
			}
			enterNetns(t, 1280)
			p, err := memory.New(memory.Config{MaxUDPSize: 4096})
			require.NoError(t, err)
			require.NoError(t, p.AddZone(zone))
			var recs []libdns.Record
			for i := range 120 { // 120 × 16 bytes of answer records
				recs = append(recs, a("many", fmt.Sprintf("192.0.2.%d", i+1)))
			}
			recs = append(recs, a("www", "192.0.2.1"))
			_, err = p.AppendRecords(context.Background(), zone, recs)
			require.NoError(t, err)

			cfg := dnsserver.DefaultServerConfig()
			cfg.Addr = net.JoinHostPort(tc.host, "0")
			cfg.UDPWorkers = 1
			srv, err := dnsserver.NewServer(p, cfg, nil)
			require.NoError(t, err)
			require.NoError(t, srv.Listen()) // in the namespace: this thread's
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			defer func() {
				cancel()
				require.NoError(t, <-done)
			}()
			server := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(srv.Addr()))
			conn, err := net.DialUDP("udp", nil, server) // in the namespace too
			require.NoError(t, err)
			defer conn.Close()

			ask := func(name string, id uint16) *dns.Msg {
				q := query(name, dns.TypeA)
				q.Id = id
				q.SetEdns0(4096, false)
				b, err := q.Pack()
				require.NoError(t, err)
				_, err = conn.Write(b)
				require.NoError(t, err)
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
				buf := make([]byte, 65535)
				n, err := conn.Read(buf)
				require.NoError(t, err)
				m := new(dns.Msg)
				require.NoError(t, m.Unpack(buf[:n]), "the reply is a whole message")
				assert.Equal(t, id, m.Id)
				return m
			}
			m := ask("many.example.test.", 1)
			assert.True(t, m.Truncated, "a reply over the link's MTU goes out truncated, not in fragments")
			assert.Zero(t, len(m.Answer), "no answer records in the truncated reply")
			require.Len(t, m.Question, 1)
			assert.Equal(t, "many.example.test.", m.Question[0].Name)
			if opt := m.IsEdns0(); assert.NotNil(t, opt, "the truncated reply keeps its OPT record") {
				assert.EqualValues(t, 4096, opt.UDPSize())
			}
			assert.EqualValues(t, 1, srv.Stats().UDPTooBig)

			m = ask("www.example.test.", 2)
			assert.False(t, m.Truncated, "a reply that fits goes out whole")
			assert.Equal(t, []string{"www.example.test. A 192.0.2.1"}, testrecords.Lines(m.Answer))
			assert.EqualValues(t, 1, srv.Stats().UDPTooBig)

			c := &dns.Client{Net: "tcp", Timeout: 10 * time.Second}
			q := query("many.example.test.", dns.TypeA)
			m, _, err = c.Exchange(q, srv.Addr())
			require.NoError(t, err)
			assert.False(t, m.Truncated)
			assert.Len(t, m.Answer, 120, "over TCP the whole answer")
		})
	}
}
