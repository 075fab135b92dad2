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
	"github.com/gslbkit/gslb/internal/fielderr"
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
		return o, fmt.Errorf("%w: unexpected argument %q", errFlags, fs.Arg(0))
	}
	if o.healthy == 0 {
		o.healthy = max(6*o.interval, time.Second)
	}
	switch {
	case o.regions < 2 || o.regions > maxRegions:
		return o, badFlag("-regions", o.regions, fielderr.Range(2, maxRegions)+" (the timeline fails a whole region)")
	case o.clusters < 1 || o.clusters > maxClusters:
		return o, badFlag("-clusters", o.clusters, fielderr.Range(1, maxClusters))
	case o.gateways < 1 || o.gateways > maxGateways:
		return o, badFlag("-gateways", o.gateways, fielderr.Range(1, maxGateways))
	case o.clusters*o.gateways < 2:
		return o, badFlag("-gateways", o.gateways, fmt.Sprintf("at least 2 gateways a region with -clusters %d (the timeline fails one and the region must survive it)", o.clusters))
	case dnsname.Check(dnsname.Fqdn(o.zone)) != nil || strings.Count(dnsname.Trim(o.zone), ".") < 1:
		return o, badFlag("-zone", o.zone, "a domain of at least two labels, e.g. example.test")
	case o.interval < 100*time.Millisecond || o.interval > 10*time.Second:
		return o, badFlag("-interval", o.interval, fielderr.DurationRange(100*time.Millisecond, 10*time.Second))
	case o.healthy < time.Second || o.healthy <= 2*o.interval || o.healthy > time.Hour:
		return o, badFlag("-healthy", o.healthy, fielderr.DurationRange(time.Second, time.Hour)+" and more than 2 × -interval ("+fielderr.Duration(2*o.interval)+")")
	case !(o.panic >= 0 && o.panic <= 100):
		return o, badFlag("-panic", o.panic, fielderr.Range(0, 100)+" (percent; 0 turns panic mode off)")
	case o.pause < 0 || o.pause > time.Minute:
		return o, badFlag("-pause", o.pause, fielderr.DurationRange(0, time.Minute))
	case o.dnsPort < -1 || o.dnsPort > 65535-maxRegions:
		return o, badFlag("-dns-port", o.dnsPort, "-1 (off), 0 (free ports) or "+fielderr.Range(1, 65535-maxRegions))
	case o.timeout <= 0:
		return o, badFlag("-timeout", o.timeout, "> 0")
	case o.ttl < time.Second || o.ttl > time.Hour || o.ttl%time.Second != 0:
		return o, badFlag("-ttl", o.ttl, fielderr.DurationRange(time.Second, time.Hour)+", whole seconds")
	}
	switch o.provider {
	case "memory":
	case "rfc2136":
		o.rfc = o.rfc.FromEnv(nil)
		if o.rfc.KeyAlg == "" {
			o.rfc.KeyAlg = rfc2136.DefaultConfig().KeyAlg
		}
		if err := o.rfc.Validate(); err != nil {
			return o, fmt.Errorf("%w: -provider rfc2136: %w (set -server, -key-name, -key-alg, -secret)", errFlags, err)
		}
	default:
		return o, badFlag("-provider", o.provider, fielderr.OneOf("memory", "rfc2136"))
	}
	return o, nil
}

// errFlags is wrapped by every error about the command line.
var errFlags = errors.New("multiregion: invalid flags")

// badFlag reports a flag's bad value in the module's one error shape:
// "multiregion: invalid flags: -regions = 1: allowed [2, 8] …".
func badFlag(flag string, value any, allowed string) error {
	return fielderr.New(errFlags, flag, value, allowed)
}
