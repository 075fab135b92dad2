package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := parseConfig(os.Args[1:], os.Stderr, os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "gslb-kubernetes:", err)
		os.Exit(2)
	}
	rc, err := restConfig(cfg.kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gslb-kubernetes:", err)
		os.Exit(1)
	}
	if err := run(ctx, cfg, rc, log, nil); err != nil {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// shared is what replicas in one process share: the embedded zones
// (tests run several replicas and clusters in one process; the program
// runs one replica).
type shared struct {
	zones *memoryZones
}

// run runs one replica until ctx ends.
func run(ctx context.Context, cfg config, rc *rest.Config, log *slog.Logger, sh *shared) error {
	r, servers, err := setup(ctx, cfg, rc, log, sh)
	if err != nil {
		return err
	}
	return r.serve(ctx, servers)
}

// setup builds a replica and its clients; servers are the listeners the
// replica serves (DNS and HTTP), bound already.
func setup(ctx context.Context, cfg config, rc *rest.Config, log *slog.Logger, sh *shared) (*replica, *listeners, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "gslbkit-kubernetes/" + cfg.cluster
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	// The Lease's client: every request bounded, so that a leader notices
	// a dead API server well before its renew deadline (the watches of the
	// informers are long requests and keep the plain client).
	lc := rest.CopyConfig(rc)
	lc.Timeout = max(cfg.retryPeriod, time.Second)
	leaseCS, err := kubernetes.NewForConfig(lc)
	if err != nil {
		return nil, nil, err
	}
	var gw gwclient.Interface
	if cfg.gatewayAPI != "off" {
		on := cfg.gatewayAPI == "on"
		if !on {
			on, err = hasGatewayAPI(cs.Discovery())
			if err != nil {
				return nil, nil, fmt.Errorf("discovering the Gateway API: %w", err)
			}
		}
		if on {
			if gw, err = gwclient.NewForConfig(rc); err != nil {
				return nil, nil, err
			}
		}
	}
	w, err := newWatcher(cs, gw, cfg.watchNS)
	if err != nil {
		return nil, nil, err
	}
	// Unreachable once the Lease's requests have failed for as long as a
	// leader tries to renew.
	w.unreachableAfter = cfg.renewDeadline
	n := newNames(cfg.domain)
	var v *view
	switch cfg.provider {
	case "memory":
		if sh == nil {
			zs, err := newMemoryZones(n)
			if err != nil {
				return nil, nil, err
			}
			sh = &shared{zones: zs} // fenced by the library: record's fence, compared by the zone
		}
		if v, err = sh.zones.view(cfg.region); err != nil {
			return nil, nil, err
		}
	case "rfc2136":
		p, err := rfc2136.New(cfg.rfc)
		if err != nil {
			return nil, nil, err
		}
		if v, err = subtreeView(p, n, cfg.region); err != nil {
			return nil, nil, err
		}
	case "route53":
		p, err := route53.New(cfg.r53)
		if err != nil {
			return nil, nil, err
		}
		if v, err = subtreeView(p, n, cfg.region); err != nil {
			return nil, nil, err
		}
	}
	met := newMetrics()
	r, err := newReplica(cfg, v, w, met, log)
	if err != nil {
		return nil, nil, err
	}
	r.cs = leaseCS
	ls := &listeners{}
	if cfg.provider == "memory" && cfg.dnsAddr != "" {
		if ls.dns, err = newRegionServer(v, n, cfg.dnsAddr); err != nil {
			return nil, nil, err
		}
	}
	if cfg.httpAddr != "" {
		if ls.http, err = net.Listen("tcp", cfg.httpAddr); err != nil {
			return nil, nil, fmt.Errorf("-http-addr: %w", err)
		}
	}
	return r, ls, nil
}

// listeners are a replica's bound servers.
type listeners struct {
	dns  *regionview.Server
	http net.Listener
}

// serve runs the replica: its informers, its campaign for the Lease (and
// its terms as leader) and its servers, until ctx ends.
func (r *replica) serve(ctx context.Context, ls *listeners) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { r.w.run(ctx); return nil })
	g.Go(func() error { return r.elect(ctx, r.cs) })
	if ls.dns != nil {
		g.Go(func() error { return ls.dns.Run(ctx, max(50*time.Millisecond, r.cfg.interval/4)) })
	}
	if ls.http != nil {
		srv := &http.Server{Handler: r.httpHandler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
		g.Go(func() error {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
		g.Go(func() error {
			if err := srv.Serve(ls.http); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	return g.Wait()
}

// hasGatewayAPI reports whether the API server serves
// gateway.networking.k8s.io/v1 Gateways.
func hasGatewayAPI(d discovery.DiscoveryInterface) (bool, error) {
	rl, err := d.ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
	if err != nil {
		if isNotFound(err) {
			return false, nil
		}
		return false, err
	}
	for _, res := range rl.APIResources {
		if res.Name == "gateways" {
			return true, nil
		}
	}
	return false, nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
