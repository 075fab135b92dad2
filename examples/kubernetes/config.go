package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
)

// Annotation marks a Service (type LoadBalancer) or a Gateway API Gateway
// as a gateway of a GSLB service: its value is the service's label, the
// controller's -service flag ("edge" publishes edge.global.<domain>).
const Annotation = "gslb.gslbkit.io/service"

// clusterRef is one cluster of the deployment's inventory.
type clusterRef struct {
	name   string
	region string
}

// config is the controller's configuration, from its flags.
type config struct {
	kubeconfig string
	cluster    string
	region     string
	clusters   []clusterRef // every cluster of the deployment, this one included
	service    string
	domain     string
	appNames   []string
	ttl        time.Duration
	panic      float64
	interval   time.Duration // heartbeat interval (beats and peer reads)
	healthy    time.Duration // how long a beat stays fresh
	secret     []byte        // heartbeat HMAC key, shared by every cluster
	keyID      string

	namespace     string // of the Lease, and of the watched objects ("" all)
	watchNS       string
	leaseName     string
	identity      string // pod name; a random suffix is added per campaign
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	gatewayAPI    string // "auto", "on", "off"

	provider string // "memory", "rfc2136", "route53"
	rfc      rfc2136.Config
	r53      route53.Config
	dnsAddr  string // where the embedded zone is served ("" off)
	httpAddr string // metrics, /healthz, /readyz ("" off)
}

func parseConfig(args []string, out io.Writer, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("gslb-kubernetes", flag.ContinueOnError)
	fs.SetOutput(out)
	var clusters, apps, secret string
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file; empty: in-cluster config (or $KUBECONFIG)")
	fs.StringVar(&c.cluster, "cluster", "", "this cluster's name, as in -clusters (required)")
	fs.StringVar(&clusters, "clusters", "", "the deployment's inventory, name=region,... every cluster, this one included, the same everywhere (required)")
	fs.StringVar(&c.service, "service", "edge", "the GSLB service: objects annotated "+Annotation+"=<this> are its gateways")
	fs.StringVar(&c.domain, "domain", "", "base domain (the global zone), e.g. example.com (required)")
	fs.StringVar(&apps, "app-names", "", "names users resolve, CNAMEs to <service>.global.<domain>, comma-separated, inside -domain")
	fs.DurationVar(&c.ttl, "ttl", 30*time.Second, "TTL of the published records, 1s–24h")
	fs.Float64Var(&c.panic, "panic", 50, "panic threshold, percent of a region's gateways (0 off)")
	fs.DurationVar(&c.interval, "interval", 5*time.Second, "heartbeat interval: beats written and peers' beats read, 100ms–1m")
	fs.DurationVar(&c.healthy, "healthy", 0, "how long a beat stays fresh; 0: 6 × -interval")
	fs.StringVar(&secret, "heartbeat-secret", "", "heartbeat HMAC key, base64, ≥ 16 bytes, the same in every cluster (or $GSLB_HEARTBEAT_SECRET)")
	fs.StringVar(&c.keyID, "heartbeat-key-id", "k1", "the key's id in signed beats")
	fs.StringVar(&c.namespace, "lease-namespace", "", "namespace of the Lease ($POD_NAMESPACE, else default)")
	fs.StringVar(&c.watchNS, "watch-namespace", "", "watch only this namespace (empty: all)")
	fs.StringVar(&c.leaseName, "lease-name", "gslb-controller", "name of the Lease")
	fs.StringVar(&c.identity, "identity", "", "leader-election identity; a random suffix is added ($POD_NAME, else the host name)")
	fs.DurationVar(&c.leaseDuration, "lease-duration", 15*time.Second, "how long a lease stays held without renewal")
	fs.DurationVar(&c.renewDeadline, "renew-deadline", 10*time.Second, "a leader that cannot renew within this stops writing (< -lease-duration)")
	fs.DurationVar(&c.retryPeriod, "retry-period", 2*time.Second, "how often candidates try to acquire and the leader renews")
	fs.StringVar(&c.gatewayAPI, "gateway-api", "auto", "watch Gateway API Gateways and HTTPRoutes: auto (when the CRDs are installed), on, off")
	fs.StringVar(&c.provider, "provider", "memory", "where the zones live: memory (embedded, served on -dns-addr), rfc2136, route53")
	c.rfc = rfc2136.DefaultConfig()
	fs.StringVar(&c.rfc.Server, "rfc2136-server", "", "rfc2136: the primary's host:port (or $"+rfc2136.EnvServer+")")
	fs.StringVar(&c.rfc.KeyName, "rfc2136-key-name", "", "rfc2136: TSIG key name (or $"+rfc2136.EnvKeyName+")")
	fs.StringVar(&c.rfc.KeyAlg, "rfc2136-key-alg", "", "rfc2136: TSIG algorithm (or $"+rfc2136.EnvKeyAlg+")")
	fs.StringVar(&c.rfc.Secret, "rfc2136-secret", "", "rfc2136: TSIG secret, base64 (or $"+rfc2136.EnvSecret+")")
	c.r53 = route53.DefaultConfig()
	fs.StringVar(&c.r53.HostedZoneID, "route53-zone-id", "", "route53: the hosted zone of -domain; credentials from the AWS SDK's chain")
	fs.StringVar(&c.dnsAddr, "dns-addr", "127.0.0.1:5353", "memory: serve this region's view of the zones here (empty: off)")
	fs.StringVar(&c.httpAddr, "http-addr", ":8080", "serve /metrics, /healthz and /readyz here (empty: off)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errFlags, fs.Arg(0))
	}
	if c.kubeconfig == "" {
		c.kubeconfig = getenv("KUBECONFIG")
	}
	if secret == "" {
		secret = getenv("GSLB_HEARTBEAT_SECRET")
	}
	if c.namespace == "" {
		c.namespace = getenv("POD_NAMESPACE")
	}
	if c.namespace == "" {
		c.namespace = "default"
	}
	if c.identity == "" {
		c.identity = getenv("POD_NAME")
	}
	if c.identity == "" {
		c.identity, _ = os.Hostname()
	}
	if c.healthy == 0 {
		c.healthy = 6 * c.interval
	}
	for _, kv := range strings.Split(clusters, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, region, ok := strings.Cut(kv, "=")
		if !ok || dnsname.Check(dnsname.Fqdn(name)) != nil || strings.Contains(name, ".") || region == "" || strings.Contains(region, ".") {
			return c, badFlag("-clusters", clusters, "name=region pairs of single DNS labels, e.g. eu-1=eu-west,us-1=us-east")
		}
		if slices.ContainsFunc(c.clusters, func(r clusterRef) bool { return r.name == name }) {
			return c, badFlag("-clusters", clusters, fmt.Sprintf("each cluster once (%q twice)", name))
		}
		c.clusters = append(c.clusters, clusterRef{name: strings.ToLower(name), region: strings.ToLower(region)})
		if strings.EqualFold(name, c.cluster) {
			c.region = strings.ToLower(region)
		}
	}
	c.cluster = strings.ToLower(c.cluster)
	for _, a := range strings.Split(apps, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.appNames = append(c.appNames, dnsname.Fqdn(strings.ToLower(a)))
		}
	}
	var err error
	if c.secret, err = base64.StdEncoding.DecodeString(secret); err != nil {
		return c, &fielderr.Error{Path: "-heartbeat-secret", Value: "(set)", Allowed: "base64 (" + err.Error() + ")", Err: errFlags}
	}
	switch {
	case c.cluster == "":
		return c, fielderr.Missing(errFlags, "-cluster", "this cluster's name, one of -clusters")
	case c.region == "":
		return c, badFlag("-cluster", c.cluster, fmt.Sprintf("a cluster in -clusters %q", clusters))
	case c.domain == "" || strings.Count(dnsname.Trim(c.domain), ".") < 1 || dnsname.Check(dnsname.Fqdn(c.domain)) != nil:
		return c, badFlag("-domain", c.domain, "a domain of at least two labels, e.g. example.com")
	case len(c.secret) < 16:
		return c, &fielderr.Error{Path: "-heartbeat-secret", Value: fmt.Sprintf("%d bytes", len(c.secret)), Allowed: ">= 16 bytes, base64 (every cluster the same; e.g. head -c32 /dev/urandom | base64)", Err: errFlags}
	case c.interval < 100*time.Millisecond || c.interval > time.Minute:
		return c, badFlag("-interval", c.interval, fielderr.DurationRange(100*time.Millisecond, time.Minute))
	case c.healthy <= 2*c.interval || c.healthy > time.Hour:
		return c, badFlag("-healthy", c.healthy, "more than 2 × -interval ("+fielderr.Duration(2*c.interval)+"), <= 1h")
	case !(c.panic >= 0 && c.panic <= 100):
		return c, badFlag("-panic", c.panic, fielderr.Range(0, 100))
	case c.ttl < time.Second || c.ttl > 24*time.Hour || c.ttl%time.Second != 0:
		return c, badFlag("-ttl", c.ttl, fielderr.DurationRange(time.Second, 24*time.Hour)+", whole seconds")
	case c.retryPeriod <= 0 || c.renewDeadline <= c.retryPeriod || c.leaseDuration <= c.renewDeadline:
		return c, badFlag("-renew-deadline", c.renewDeadline, "more than -retry-period ("+fielderr.Duration(c.retryPeriod)+") and less than -lease-duration ("+fielderr.Duration(c.leaseDuration)+"); lease timings need 0 < -retry-period < -renew-deadline < -lease-duration")
	case c.gatewayAPI != "auto" && c.gatewayAPI != "on" && c.gatewayAPI != "off":
		return c, badFlag("-gateway-api", c.gatewayAPI, fielderr.OneOf("auto", "on", "off"))
	}
	for _, a := range c.appNames {
		if dnsname.Check(a) != nil || !dnsname.InZone(a, dnsname.Fqdn(c.domain)) {
			return c, badFlag("-app-names", a, fmt.Sprintf("names inside -domain %q", c.domain))
		}
	}
	switch c.provider {
	case "memory":
	case "rfc2136":
		c.rfc = c.rfc.FromEnv(getenv)
		if err := c.rfc.Validate(); err != nil {
			return c, fmt.Errorf("%w: -provider rfc2136: %w", errFlags, err)
		}
	case "route53":
		c.r53 = c.r53.FromEnv(getenv)
	default:
		return c, badFlag("-provider", c.provider, fielderr.OneOf("memory", "rfc2136", "route53"))
	}
	return c, nil
}

// errFlags is wrapped by every error about the command line.
var errFlags = errors.New("kubernetes: invalid flags")

// badFlag reports a flag's bad value in the module's one error shape:
// "kubernetes: invalid flags: -panic = 101: allowed [0, 100]".
func badFlag(flag string, value any, allowed string) error {
	return fielderr.New(errFlags, flag, value, allowed)
}
