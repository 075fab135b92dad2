//go:build linux

package main

import (
	"strings"
	"testing"
	"time"
)

// The controller log of seed 38005's run at step 107 (rollback), under a
// load average of ~20: every address of n2 went critical by probe
// timeouts for 100 ms, and the watcher saw n2 answer its failover at
// 01:48:56.284. The daemon was right by its probes.
const seed38005Log = `{"time":"2026-12-04T01:48:53.863807341Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"passing","to":"warning","cause":"probe","detail":"read response: read tcp 127.0.0.1:41814->127.0.0.1:17326: i/o timeout","served":true}
{"time":"2026-12-04T01:48:53.929151214Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"warning","to":"passing","cause":"probe","detail":"status 200","served":true}
{"time":"2026-12-04T01:48:55.900459233Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.17","from":"passing","to":"warning","cause":"probe","detail":"read response: read tcp 127.0.0.1:42582->127.0.0.1:23413: i/o timeout","served":true}
{"time":"2026-12-04T01:48:56.048691834Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"passing","to":"warning","cause":"probe","detail":"read response: read tcp 127.0.0.1:41846->127.0.0.1:17326: i/o timeout","served":true}
{"time":"2026-12-04T01:48:56.280439007Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.17","from":"warning","to":"critical","cause":"probe","detail":"connect: dial tcp 127.0.0.1:23413: i/o timeout","served":false}
{"time":"2026-12-04T01:48:56.28152981Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"warning","to":"critical","cause":"probe","detail":"connect: dial tcp 127.0.0.1:17326: i/o timeout","served":false}
{"time":"2026-12-04T01:48:56.376753402Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.17","from":"critical","to":"passing","cause":"probe","detail":"status 200","served":true}
{"time":"2026-12-04T01:48:56.377242678Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"critical","to":"passing","cause":"probe","detail":"status 200","served":true}
`

// The next run of the same controller: it restored both addresses
// critical (a failure since their last pass in the file), and answered the
// failover name until their first probes passed.
const restartedLog = `{"time":"2026-12-04T01:48:57.46254358Z","level":"INFO","msg":"started","mode":"controller"}
{"time":"2026-12-04T01:48:57.98Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.16","from":"critical","to":"passing","cause":"probe","detail":"status 200","served":true}
{"time":"2026-12-04T01:48:57.99Z","level":"INFO","msg":"address state","record":"n2.example.test.","address":"192.0.2.17","from":"critical","to":"passing","cause":"probe","detail":"status 200","served":true}
`

func TestProbeFailedAll(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, "2026-12-04T"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	n2 := []string{"192.0.2.16", "192.0.2.17"}
	for _, tc := range []struct {
		name     string
		prev     string
		log      string
		ips      []string
		from, to string
		want     bool
	}{
		{"restored critical after timeouts", seed38005Log, restartedLog, n2, "01:48:57.5", "01:48:57.6", true},
		{"restored critical, passed since", seed38005Log, restartedLog, n2, "01:48:57.985", "01:48:58.2", false},
		{"restored critical without a timeout before", "", restartedLog, n2, "01:48:57.5", "01:48:57.6", false},
		{"the seed-38005 answer, controller grace", "", seed38005Log, n2, "01:48:55.784", "01:48:56.284", true},
		{"a node's grace reaching into the window", "", seed38005Log, n2, "01:48:54.6", "01:48:56.29", true},
		{"after the recovery", "", seed38005Log, n2, "01:48:56.38", "01:48:56.9", false},
		{"before both were critical", "", seed38005Log, n2, "01:48:55.5", "01:48:56.281", false},
		{"an address the log never failed", "", seed38005Log, append(n2, "192.0.2.99"), "01:48:55.784", "01:48:56.284", false},
		{"refused, not timed out", "", strings.ReplaceAll(seed38005Log, "i/o timeout", "connection refused"), n2, "01:48:55.784", "01:48:56.284", false},
	} {
		if got := probeFailedAll(tc.prev, tc.log, "n2.example.test.", tc.ips, at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("%s: probeFailedAll = %v, want %v", tc.name, got, tc.want)
		}
	}
}
