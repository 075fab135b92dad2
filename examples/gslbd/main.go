package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// errorLine is err as main prints it: with the prefix "gslbd: " once (a
// config error carries it already).
func errorLine(err error) string {
	if msg := err.Error(); strings.HasPrefix(msg, "gslbd: ") {
		return msg
	}
	return "gslbd: " + err.Error()
}

// run is the whole program: it parses args, loads the config and serves
// until ctx ends (SIGINT or SIGTERM in main), then shuts down gracefully and
// returns. With -check it validates the config, prints a summary and returns.
// The first line on stdout names the addresses served.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gslbd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "gslbd.yaml", "path of the YAML config")
	check := fs.Bool("check", false, "validate the config, print a summary and exit")
	online := fs.Bool("online", false, "with -check: also read the provider's zone once (credentials, zone access)")
	nodeMode := fs.Bool("node", false, "run as a DNS node following a controller (never probes)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	version := fs.Bool("version", false, "print the version (module version, VCS revision) and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version {
		fmt.Fprintln(stdout, "gslbd", buildVersion())
		return nil
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level %q: allowed debug, info, warn, error", *level)
	}
	data, err := os.ReadFile(*path)
	if err != nil {
		return fmt.Errorf("-config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return err
	}
	if *nodeMode {
		err = cfg.ValidateNode()
	} else {
		err = cfg.Validate()
	}
	if err != nil {
		return err
	}
	if *online && !*check {
		return errors.New("-online: goes with -check")
	}
	if *check {
		if *nodeMode {
			note := ""
			if *online {
				note = " (online: not checked; a node reaches only its controller)"
			}
			fmt.Fprintf(stdout, "config OK: node following %s, DNS on %s%s\n", cfg.Node.URL, cfg.DNS.Addr, note)
			for _, r := range cfg.Records {
				if r.perQuery() {
					fmt.Fprintf(stdout, "  %s: answer %s\n", r.Name, answerSummary(cfg, r))
				}
			}
		} else {
			reach := ""
			if *online {
				if t := cfg.Provider.Type; t == "" || t == "embedded" {
					reach = " (online: nothing to reach, the embedded zone only)"
				} else {
					n, err := checkOnline(ctx, cfg)
					if err != nil {
						return fmt.Errorf("-online: %w", err)
					}
					reach = fmt.Sprintf(" (online: zone read, %d records)", n)
				}
			}
			n := 0
			for _, r := range cfg.Records {
				n += len(r.Addresses)
			}
			fmt.Fprintf(stdout, "config OK: zone %s, %d records, %d addresses, provider %s, style %s%s\n",
				cfg.Zone, len(cfg.Records), n, providerName(cfg.Provider.Type), styleName(cfg.Style), reach)
			for _, r := range cfg.Records {
				fmt.Fprintf(stdout, "  %s: answer %s\n", r.Name, answerSummary(cfg, r))
			}
		}
		return nil
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	met := newMetrics()
	if *nodeMode {
		n, err := newNode(cfg, nil, met, log)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, "node", n.zoneServer(), n.handler(), n.Run, stdout, log)
	}
	if cfg.Style == StyleRelaxed {
		log.Warn("style relaxed: probe ranges are the library's, not the record service's (tests and demos only)")
	}
	c, err := newController(cfg, deps{}, met, log)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, "controller", c.zoneServer(), c.handler(), c.Run, stdout, log)
}

func providerName(t string) string {
	if t == "" {
		return "embedded"
	}
	return t
}

func styleName(s Style) string {
	if s == "" {
		return string(StyleRecordService)
	}
	return string(s)
}

// zoneSource is what serve needs to answer DNS.
type zoneSource struct {
	zone *memory.Provider
	met  *metrics
	// answering, when not nil, is closed once the zone holds answers: the
	// DNS listener is bound at once but read only from then on.
	answering <-chan struct{}
}

// serve binds the DNS and HTTP listeners, prints where they are, and runs
// the mode's loop beside them until ctx ends; then it stops the HTTP
// server (waiting up to 5 s for requests in flight) and every goroutine.
func serve(ctx context.Context, cfg Config, mode string, zs zoneSource, h http.Handler,
	loop func(context.Context) error, stdout io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("http: %w", err) // err says "listen tcp <addr>: ..."
	}
	var dnsSrv *dnsserver.Server
	if cfg.DNS.Addr != "" {
		if dnsSrv, err = newDNSServer(cfg, zs.zone, log); err != nil {
			ln.Close()
			return fmt.Errorf("dns: %w", err)
		}
		zs.met.dns.serve(dnsSrv)
		zs.met.ready.addDNSChecks(dnsSrv)
	}
	dnsAddr := "-"
	if dnsSrv != nil {
		dnsAddr = dnsSrv.Addr()
	}
	fmt.Fprintf(stdout, "gslbd %s: dns=%s http=%s\n", mode, dnsAddr, ln.Addr())
	log.Info("started", "mode", mode, "dns", dnsAddr, "http", ln.Addr().String())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lim := newConnLimiter(ln, httpMaxConns(cfg.HTTP.MaxConns))
	lim.register(zs.met.reg)
	hs := newHTTPServer(lim.guard(hostGuard(cfg.HTTP.Addr, cfg.HTTP.AllowedHosts, h)))
	hs.ConnState, hs.ConnContext = lim.track, lim.connContext
	if n, ok := fileLimit(); ok && dnsSrv != nil && uint64(lim.max+reserveConns+dnsSrv.TCPLimit()) > n*3/4 {
		log.Warn("http.maxConns and dns.maxTCPConns together take more than three quarters of the descriptor limit: probes and DNS TCP may run out of descriptors under an HTTP flood (leave them 0 to derive them)",
			"httpMaxConns", lim.max, "dnsMaxTCPConns", dnsSrv.TCPLimit(), "nofile", n)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	fail := func(err error) {
		if err != nil && ctx.Err() == nil {
			errc <- err
			cancel()
		}
	}
	wg.Go(func() {
		if err := hs.Serve(lim); !errors.Is(err, http.ErrServerClosed) {
			fail(err)
		}
	})
	if dnsSrv != nil {
		wg.Go(func() {
			if zs.answering != nil {
				select {
				case <-zs.answering:
				case <-ctx.Done():
					// Stopped before the zone held answers: close the
					// sockets unread. Run would first serve the queries
					// waiting in them, from a zone that has no answers
					// yet (NXDOMAIN for a configured name).
					fail(dnsSrv.Close())
					return
				}
			}
			fail(dnsSrv.Run(ctx))
		})
	}
	wg.Go(func() { fail(loop(ctx)) })
	wg.Go(func() { zs.met.ready.run(ctx, log) })
	<-ctx.Done()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = hs.Shutdown(sctx)
	scancel()
	wg.Wait()
	log.Info("stopped", "mode", mode)
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}
