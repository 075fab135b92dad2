package testmoto_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gslbkit/gslb/internal/testmoto"
)

// Zone creates a hosted zone with one POST of Route 53's REST API; here a
// stand-in answers as moto does.
func ExampleServer_Zone() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Method, r.URL.Path, strings.Contains(string(body), "<Name>example.test.</Name>"))
		fmt.Fprint(w, `<CreateHostedZoneResponse><HostedZone><Id>/hostedzone/Z123</Id></HostedZone></CreateHostedZoneResponse>`)
	}))
	defer api.Close()
	s := &testmoto.Server{Endpoint: api.URL}
	fmt.Println(s.Zone(context.Background(), "example.test."))
	// Output:
	// POST /2013-04-01/hostedzone true
	// Z123 <nil>
}
