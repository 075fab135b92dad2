package probetest_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/gslbkit/gslb/internal/probetest"
)

func Example() {
	// Outside a test, testing.Benchmark supplies a testing.TB.
	testing.Benchmark(func(b *testing.B) {
		ca := probetest.NewCA(b)
		pair, _, _ := ca.Issue(false, "127.0.0.1")
		addr := probetest.Serve(b, func(c net.Conn, _ <-chan struct{}) {
			tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{pair}})
			_, _ = io.WriteString(tc, "hello")
			_ = tc.Close()
		})
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer c.Close()
		got, _ := io.ReadAll(c)
		if b.N == 1 {
			fmt.Println(string(got))
		}
	})
	// Output: hello
}
