package grpcprobe

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/probetest"
)

// probersCtx returns a context with a generous hang guard.
func probersCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// probersNewCA is a throw-away certificate authority for TLS tests.
func probersNewCA(t testing.TB) *probetest.CA { return probetest.NewCA(t) }

// probersTCPServer runs handle for each connection on a loopback listener;
// handle gets a channel closed at cleanup, for servers that hang.
func probersTCPServer(t testing.TB, handle func(c net.Conn, done <-chan struct{})) string {
	return probetest.Serve(t, handle)
}
