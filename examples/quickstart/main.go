// Command quickstart shows health-checked DNS failover end to end, in one
// process and with nothing to install: three HTTP backends on loopback, a
// probe.Monitor checking them, the failover record policy deciding the
// answer, a record.Reconciler publishing it into the in-memory zone, and the
// zone answering real DNS queries on 127.0.0.1.
//
// After a few seconds it stops one backend, shows the answer change and how
// long that took beside the bound the policy promises
// (probe.WorstCaseDetection plus the publish delay), restarts the backend and
// shows it come back. It exits within a minute by default; -duration 0 keeps
// serving until Ctrl-C so you can dig it.
//
//	go run ./examples/quickstart
//	dig @127.0.0.1 -p 5353 app.example.test A +short
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// options are the quickstart's flags.
type options struct {
	port      int
	duration  time.Duration
	interval  time.Duration
	timeout   time.Duration
	killAfter time.Duration
	downFor   time.Duration
	ttl       time.Duration
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.port, "port", 5353, "UDP and TCP port of the embedded DNS server on 127.0.0.1 (0 picks a free one)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to run at most; 0 runs until Ctrl-C")
	fs.DurationVar(&o.interval, "interval", time.Second, "probe interval of a passing backend")
	fs.DurationVar(&o.timeout, "timeout", 500*time.Millisecond, "probe timeout")
	fs.DurationVar(&o.killAfter, "kill-after", 4*time.Second, "when to stop backend-2, after all backends pass")
	fs.DurationVar(&o.downFor, "down-for", 6*time.Second, "how long backend-2 stays down")
	fs.DurationVar(&o.ttl, "ttl", 5*time.Second, "TTL of the published records")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.port < 0 || o.port > 65535:
		return o, badFlag("-port", o.port, fielderr.Range(0, 65535))
	case o.duration < 0:
		return o, badFlag("-duration", o.duration, fielderr.DurationAtLeast(0))
	case o.interval < 10*time.Millisecond || o.interval > time.Minute:
		return o, badFlag("-interval", o.interval, fielderr.DurationRange(10*time.Millisecond, time.Minute))
	case o.timeout <= 0 || o.timeout > o.interval:
		return o, badFlag("-timeout", o.timeout, "> 0 and <= -interval ("+fielderr.Duration(o.interval)+")")
	case o.killAfter < 0:
		return o, badFlag("-kill-after", o.killAfter, fielderr.DurationAtLeast(0))
	case o.downFor <= 0:
		return o, badFlag("-down-for", o.downFor, "> 0")
	case o.ttl < time.Second || o.ttl > time.Hour:
		return o, badFlag("-ttl", o.ttl, fielderr.DurationRange(time.Second, time.Hour))
	}
	return o, nil
}

// errFlags is wrapped by every error about the command line.
var errFlags = errors.New("quickstart: invalid flags")

// badFlag reports a flag's bad value in the module's one error shape:
// "quickstart: invalid flags: -port = 70000: allowed [0, 65535]".
func badFlag(flag string, value any, allowed string) error {
	return fielderr.New(errFlags, flag, value, allowed)
}
