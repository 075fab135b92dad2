package dnsserver_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/stretchr/testify/require"
)

// TestServerStopsWhileConnectionsArrive: a Server stopped while clients
// keep opening TCP connections returns cleanly every time. Its accept loop
// must have returned before Run waits for the connections' goroutines: a
// connection accepted during the shutdown used to be added to that wait
// while it was in progress (the race detector reports it; sync.WaitGroup
// forbids it). Run with -race.
func TestServerStopsWhileConnectionsArrive(t *testing.T) {
	p := fixture(t)
	for range 30 {
		cfg := dnsserver.DefaultServerConfig()
		cfg.Addr = "127.0.0.1:0"
		cfg.ShutdownTimeout = time.Millisecond
		srv, err := dnsserver.NewServer(p, cfg, nil)
		require.NoError(t, err)
		require.NoError(t, srv.Listen())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()

		stop, started := make(chan struct{}), make(chan struct{})
		var dialed atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.DialTimeout("tcp", srv.Addr(), time.Second)
					if err != nil {
						continue // refused once the listener is closed
					}
					_, _ = c.Write([]byte{0, 12})
					c.Close()
					if dialed.Add(1) == 20 {
						close(started)
					}
				}
			})
		}
		// Stop while the dialers are at it: some connections are
		// always between Accept and their goroutine.
		<-started
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("server did not stop (hang guard)")
		}
		close(stop)
		wg.Wait()
	}
}
