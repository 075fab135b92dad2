package testunbound_test

import (
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/testunbound"
)

// The configuration Start gives unbound for a subnet-caching resolver in
// front of one loopback authority.
func ExampleConfig_Render() {
	cfg := testunbound.Config{Stubs: map[string]string{"example.test.": "127.0.0.1:5300"}, SubnetCache: true}
	fmt.Print(cfg.Render("/tmp/u", 5353))
	// Output:
	// server:
	//   interface: 127.0.0.1
	//   port: 5353
	//   do-ip6: no
	//   num-threads: 1
	//   do-not-query-localhost: no
	//   access-control: 127.0.0.0/8 allow
	//   username: ""
	//   chroot: ""
	//   directory: "/tmp/u"
	//   pidfile: "/tmp/u/unbound.pid"
	//   use-syslog: no
	//   logfile: ""
	//   verbosity: 1
	//   local-zone: "test." nodefault
	//   module-config: "subnetcache validator iterator"
	//   client-subnet-always-forward: yes
	//   max-client-subnet-ipv4: 24
	//   send-client-subnet: 127.0.0.1
	// stub-zone:
	//   name: "example.test"
	//   stub-addr: 127.0.0.1@5300
}

// A validating resolver with unbound-control, as internal/testdnssec
// starts it: the trust anchors' file, validation failures logged with
// their reasons, extended DNS errors; Run picks the control port.
func ExampleConfig_Render_validating() {
	cfg := testunbound.Config{
		Stubs:           map[string]string{"example.test.": "127.0.0.1:5300"},
		TrustAnchorFile: "/tmp/u/anchor", NoQnameMinimisation: true, Control: true,
	}
	out := cfg.Render("/tmp/u", 5353)
	fmt.Print(out[strings.Index(out, "  local-zone"):])
	// Output:
	//   local-zone: "test." nodefault
	//   qname-minimisation: no
	//   trust-anchor-file: "/tmp/u/anchor"
	//   val-log-level: 2
	//   ede: yes
	//   module-config: "validator iterator"
	// remote-control:
	//   control-enable: yes
	//   control-interface: 127.0.0.1
	//   control-use-cert: no
	// stub-zone:
	//   name: "example.test"
	//   stub-addr: 127.0.0.1@5300
}
