package probe_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// An HTTPS check that trusts the server's CA and offers the X25519 key
// exchange only. By default the second probe resumes the TLS session of the
// first (the prober keeps its target's last session ticket); with
// DisableResumption every probe makes a full handshake.
func ExampleTLSConfig() {
	resumed := make(chan bool, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
		resumed <- cs.DidResume
		return nil
	}}
	srv.StartTLS()
	defer srv.Close()
	// httptest's certificate is its own CA, for example.com and 127.0.0.1.
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	for _, disable := range []bool{false, true} {
		cfg := probe.DefaultHTTPConfig()
		cfg.Hostname = "example.com"
		cfg.TLS = &probe.TLSConfig{CAPEM: string(caPEM), Curves: []string{"X25519"}, DisableResumption: disable}
		h, err := probe.NewHTTP(srv.Listener.Addr().String(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("disableResumption %v:", disable)
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r := h.Probe(ctx)
			cancel()
			fmt.Printf(" %s (resumed %v)", r.Status, <-resumed)
		}
		fmt.Println()
	}
	// Output:
	// disableResumption false: pass (resumed false) pass (resumed true)
	// disableResumption true: pass (resumed false) pass (resumed false)
}
