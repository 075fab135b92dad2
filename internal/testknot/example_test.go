package testknot_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/testknot"
)

// The configuration a secondary gets: the primary it transfers from with
// its key, NOTIFY taken from the primary's host, and its copy of the zone
// kept in its directory.
func ExampleConfig_Render() {
	cfg := testknot.Config{Zone: "example.test.", Primary: "127.0.0.1:5300", KeyName: "xfr-key.", Secret: "c2VjcmV0"}
	fmt.Print(cfg.Render("/tmp/k", 5353))
	// Output:
	// server:
	//     listen: 127.0.0.1@5353
	//     rundir: /tmp/k
	// log:
	//   - target: stderr
	//     any: info
	// database:
	//     storage: /tmp/k
	// key:
	//   - id: xfr-key
	//     algorithm: hmac-sha256
	//     secret: c2VjcmV0
	// remote:
	//   - id: primary
	//     address: 127.0.0.1@5300
	//     key: xfr-key
	// acl:
	//   - id: notify
	//     address: 127.0.0.1
	//     action: notify
	// template:
	//   - id: default
	//     storage: /tmp/k
	// zone:
	//   - domain: example.test
	//     master: primary
	//     acl: notify
	//     file: /tmp/k/zone.db
}

// The configuration an updatable primary gets: its key may update and
// transfer the zone, and the changes go to the journal, never to the zone
// file.
func ExampleConfig_Render_updates() {
	cfg := testknot.Config{Zone: "example.test.", ZoneText: "…", Updates: true, KeyName: "gslb-key", Secret: "c2VjcmV0"}
	fmt.Print(cfg.Render("/tmp/k", 5353))
	// Output:
	// server:
	//     listen: 127.0.0.1@5353
	//     rundir: /tmp/k
	// log:
	//   - target: stderr
	//     any: info
	// database:
	//     storage: /tmp/k
	// key:
	//   - id: gslb-key
	//     algorithm: hmac-sha256
	//     secret: c2VjcmV0
	// acl:
	//   - id: update
	//     key: gslb-key
	//     action: [transfer, update]
	// template:
	//   - id: default
	//     storage: /tmp/k
	//     zonefile-sync: -1
	//     journal-content: changes
	// zone:
	//   - domain: example.test
	//     file: /tmp/k/zone.db
	//     acl: update
}
