//go:build linux

package probe

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTCPConnectOnlyNotAccepted: by default a connect-only check resets the
// connection before the handshake completes, so the target's listener
// never accepts it; with CompleteHandshake it does.
func TestTCPConnectOnlyNotAccepted(t *testing.T) {
	tcpCheckNotAccepted(t, func(t *testing.T, p *TCP) Result { return p.Probe(probersCtx(t, 5*time.Second)) })
}

// tcpCheckNotAccepted runs ten connect-only checks through probe, with and
// without CompleteHandshake, and requires the listener to accept none of
// them by default and some with CompleteHandshake. After the probes a
// sentinel connection completes a handshake and sends "S": the accept
// queue is first in, first out, so every probe connection that completed
// its handshake is accepted before the sentinel.
func tcpCheckNotAccepted(t *testing.T, probe func(*testing.T, *TCP) Result) {
	for _, complete := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "CompleteHandshake"}[complete], func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			accepted := make(chan bool, 64) // true for the sentinel
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
					b := make([]byte, 1)
					n, _ := c.Read(b)
					c.Close()
					sentinel := n == 1 && b[0] == 'S'
					accepted <- sentinel
					if sentinel {
						return
					}
				}
			})
			defer wg.Wait()

			const probes = 10
			p, err := NewTCP(ln.Addr().String(), TCPConfig{CompleteHandshake: complete})
			require.NoError(t, err)
			for range probes {
				r := probe(t, p)
				require.Equal(t, Pass, r.Status, r.Detail)
				require.Equal(t, "connected", r.Detail)
			}
			s, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			_, err = s.Write([]byte("S"))
			require.NoError(t, err)
			defer s.Close()

			before := 0
			for sentinel := range accepted {
				if sentinel {
					break
				}
				before++
			}
			if complete {
				assert.Positive(t, before, "probe connections accepted before the sentinel")
			} else {
				assert.Zero(t, before, "probe connections accepted before the sentinel")
			}
		})
	}
}
