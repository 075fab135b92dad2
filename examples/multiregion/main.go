// Command multiregion runs the heartbeat controller's system in one process:
// N regions × M clusters, each cluster a controller with its own gateways,
// health gates, heartbeat publisher and readers, the failover package's
// CNAME-topology policy and a record.Reconciler. The zones are in memory by
// default (one shared global zone, one private local zone per region: split
// horizon); -provider rfc2136 makes every controller write one real BIND
// server instead.
//
// A scripted timeline fails one gateway, then a whole region, then heals
// both, and prints how httpbin.<zone> resolves from each region at each step
// (with -throttle, a last step throttles one controller's heartbeat writes
// until it self-heals). A region whose served gateways fall below -panic
// percent of its gateways (Envoy's panic threshold, default 50, strictly
// below) is treated as failed: its regional record holds the other
// regions' healthy gateways at once, and its controllers stop beating so
// that every controller fails it over; its clients are neither crowded
// onto the last survivors nor held on dead gateways. Each region's view is served on 127.0.0.1 for dig
// while it runs. With -metrics it serves Prometheus metrics under the
// gslbkit_ prefix. See README.md.
//
//	go run ./examples/multiregion
//	go run ./examples/multiregion -regions 3 -throttle -metrics 127.0.0.1:9090 -stay
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider/rfc2136"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "multiregion:", err)
		os.Exit(1)
	}
}

// options are the program's flags.
type options struct {
	regions  int
	clusters int
	gateways int
	zone     string
	interval time.Duration
	healthy  time.Duration
	pause    time.Duration
	timeout  time.Duration
	ttl      time.Duration
	panic    float64
	metrics  string
	dnsPort  int
	stay     bool
	throttle bool
	provider string
	rfc      rfc2136.Config
}

// maxRegions and friends keep the demo's addresses (10.<region>.<cluster>.<gateway>)
// and its output readable.
const (
	maxRegions  = 8
	maxClusters = 8
	maxGateways = 8
)

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("multiregion", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.regions, "regions", 2, "number of regions, 2–8")
	fs.IntVar(&o.clusters, "clusters", 2, "clusters (controllers) per region, 1–8")
	fs.IntVar(&o.gateways, "gateways", 2, "gateways per cluster, 1–8")
	fs.StringVar(&o.zone, "zone", "example.test", "base domain: httpbin.<zone> is resolved")
	fs.DurationVar(&o.interval, "interval", 500*time.Millisecond, "reconcile interval of every controller and heartbeat, 100ms–10s")
	fs.DurationVar(&o.healthy, "healthy", 0, "how long a heartbeat stays fresh; 0 means 6 × -interval (at least 1s)")
	fs.DurationVar(&o.pause, "pause", 2*time.Second, "how long each step's state is shown before the next step")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "the whole timeline must finish within this (hang guard)")
	fs.DurationVar(&o.ttl, "ttl", 5*time.Second, "TTL of the published records, 1s–1h")
	fs.Float64Var(&o.panic, "panic", 50, "panic threshold in percent, 0–100: a region with fewer healthy gateways than this share is treated as failed (0: off, keep the last set)")
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics at http://<addr>/metrics, e.g. 127.0.0.1:9090 (off when empty)")
	fs.IntVar(&o.dnsPort, "dns-port", 0, "serve each region's view on 127.0.0.1 for dig: region i on this port + i; 0 picks free ports, -1 serves none")
	fs.BoolVar(&o.throttle, "throttle", false, "add a last step: one controller's heartbeat writes are throttled until it self-heals (no failover)")
	fs.BoolVar(&o.stay, "stay", false, "keep running after the timeline until Ctrl-C (to scrape metrics or look around)")
	fs.StringVar(&o.provider, "provider", "memory", `where the zones live: "memory" (in process) or "rfc2136" (a real BIND; see README)`)
	o.rfc = rfc2136.DefaultConfig()
	fs.StringVar(&o.rfc.Server, "server", "", "rfc2136: the primary's host:port (or $"+rfc2136.EnvServer+")")
	fs.StringVar(&o.rfc.KeyName, "key-name", "", "rfc2136: TSIG key name (or $"+rfc2136.EnvKeyName+")")
	fs.StringVar(&o.rfc.KeyAlg, "key-alg", "", "rfc2136: TSIG algorithm, default hmac-sha256 (or $"+rfc2136.EnvKeyAlg+")")
	fs.StringVar(&o.rfc.Secret, "secret", "", "rfc2136: TSIG secret, base64 (or $"+rfc2136.EnvSecret+")")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.healthy == 0 {
		o.healthy = max(6*o.interval, time.Second)
	}
	switch {
	case o.regions < 2 || o.regions > maxRegions:
		return o, fmt.Errorf("-regions %d: allowed 2–%d (the timeline fails a whole region)", o.regions, maxRegions)
	case o.clusters < 1 || o.clusters > maxClusters:
		return o, fmt.Errorf("-clusters %d: allowed 1–%d", o.clusters, maxClusters)
	case o.gateways < 1 || o.gateways > maxGateways:
		return o, fmt.Errorf("-gateways %d: allowed 1–%d", o.gateways, maxGateways)
	case o.clusters*o.gateways < 2:
		return o, fmt.Errorf("-clusters %d × -gateways %d: a region needs at least 2 gateways (the timeline fails one and the region must survive it)", o.clusters, o.gateways)
	case dnsname.Check(dnsname.Fqdn(o.zone)) != nil || strings.Count(dnsname.Trim(o.zone), ".") < 1:
		return o, fmt.Errorf("-zone %q: want a domain of at least two labels, e.g. example.test", o.zone)
	case o.interval < 100*time.Millisecond || o.interval > 10*time.Second:
		return o, fmt.Errorf("-interval %v: allowed 100ms–10s", o.interval)
	case o.healthy < time.Second || o.healthy <= 2*o.interval || o.healthy > time.Hour:
		return o, fmt.Errorf("-healthy %v: allowed 1s–1h and more than 2 × -interval (%v)", o.healthy, 2*o.interval)
	case !(o.panic >= 0 && o.panic <= 100):
		return o, fmt.Errorf("-panic %v: allowed 0–100 (percent; 0 turns panic mode off)", o.panic)
	case o.pause < 0 || o.pause > time.Minute:
		return o, fmt.Errorf("-pause %v: allowed 0–1m", o.pause)
	case o.dnsPort < -1 || o.dnsPort > 65535-maxRegions:
		return o, fmt.Errorf("-dns-port %d: allowed -1 (off), 0 (free ports) or 1–%d", o.dnsPort, 65535-maxRegions)
	case o.timeout <= 0:
		return o, fmt.Errorf("-timeout %v: must be positive", o.timeout)
	case o.ttl < time.Second || o.ttl > time.Hour || o.ttl%time.Second != 0:
		return o, fmt.Errorf("-ttl %v: allowed 1s–1h, whole seconds", o.ttl)
	}
	switch o.provider {
	case "memory":
	case "rfc2136":
		o.rfc = o.rfc.FromEnv(nil)
		if o.rfc.KeyAlg == "" {
			o.rfc.KeyAlg = rfc2136.DefaultConfig().KeyAlg
		}
		if err := o.rfc.Validate(); err != nil {
			return o, fmt.Errorf("-provider rfc2136: %w (set -server, -key-name, -key-alg, -secret)", err)
		}
	default:
		return o, fmt.Errorf(`-provider %q: allowed "memory" or "rfc2136"`, o.provider)
	}
	return o, nil
}
