package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/internal/testproc"
)

// The tests start real API servers (kube-apiserver and etcd, built by
// .ci/kube-binaries) with controller-runtime's envtest: two clusters in two
// regions, sharing one embedded DNS zone served on 127.0.0.1, with two
// replicas in the first cluster. Timings are short; every bound below is
// the README's, a sum of the configuration's terms, and is asserted.
const (
	tInterval = 200 * time.Millisecond
	tHealthy  = 1200 * time.Millisecond
	tLease    = 3 * time.Second
	tRenew    = 2 * time.Second
	tRetry    = 500 * time.Millisecond
	tRefresh  = 50 * time.Millisecond // the test DNS servers' copy
	// tJitter is client-go's candidate period at its longest: the retry
	// period jittered by up to 1.2 × more.
	tJitter = tRetry * 22 / 10
	// tRequest is the Lease client's request timeout (max(retry, 1 s)): a
	// request in flight when the API server comes back fails only then.
	tRequest = time.Second
	// tWork is the one term the configuration does not bound: the work
	// between the timed events (a watch event's delivery, a reconcile, a
	// write, a copy, the test's DNS queries every 10 ms) on a shared
	// 2-core machine.
	tWork     = 100 * time.Millisecond
	domain    = "example.test"
	app       = "httpbin.example.test."
	globalN   = "edge.global.example.test."
	regionalN = "edge.local.example.test."
	failoverN = "global-edge.global.example.test."
)

// kubeAssets returns the directory holding kube-apiserver and etcd, or
// skips the test (fails it when GSLBKIT_REQUIRE_KUBE=1).
func kubeAssets(t *testing.T) string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "gslbkit", "kube-v1.34.2")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			testproc.Missing(t, "GSLBKIT_REQUIRE_KUBE", fmt.Sprintf("no %s in %s: build them with .ci/kube-binaries (and set KUBEBUILDER_ASSETS to the directory it prints)", b, dir))
		}
	}
	return dir
}

// gatewayCRDs is the Gateway API module's standard CRDs, in the module
// cache (through the module proxy, as every other dependency).
func gatewayCRDs(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
}

type testCluster struct {
	name, region string
	env          *envtest.Environment
	cfg          *rest.Config
	cs           kubernetes.Interface
	gw           gwclient.Interface
}

// testReplica is one replica run by the test, behind its own proxy to
// its cluster's API server.
type testReplica struct {
	name   string
	cl     *testCluster
	r      *replica
	px     *proxy
	cancel context.CancelFunc
	done   chan error
	// freeze, when set, is called before each write (see fencedStore).
	freeze atomic.Pointer[func(zone string, recs []libdns.Record) bool]
	after  atomic.Pointer[func(zone string, recs []libdns.Record, err error)]
}

func (tr *testReplica) leading() bool { return testutil.ToFloat64(tr.r.met.leader) == 1 }

type harness struct {
	t        *testing.T
	ctx      context.Context
	clusters []*testCluster
	sh       *shared
	logs     *testproc.Buffer
	secret   string
	servers  map[string]*regionview.Server // by region
	replicas []*testReplica
	// provider, when set, replaces "-provider memory" in the replicas'
	// flags (and may add more); interval and healthy, when set, replace
	// tInterval and tHealthy.
	provider          []string
	interval, healthy time.Duration
}

func newHarness(t *testing.T, specs ...[2]string) *harness {
	assets := kubeAssets(t)
	crds := gatewayCRDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, ctx: ctx, logs: &testproc.Buffer{}, servers: map[string]*regionview.Server{}}
	h.secret = base64.StdEncoding.EncodeToString([]byte("a test secret of 32 bytes, fixed"))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", h.logs.String())
		}
	})
	// Start the API servers at once, one per cluster.
	var wg sync.WaitGroup
	errs := make([]error, len(specs))
	start := time.Now()
	for i, s := range specs {
		cl := &testCluster{name: s[0], region: s[1]}
		// The binaries are built without optimisation (.ci/kube-binaries):
		// two of them starting at once on a loaded 2-core machine may take
		// longer than envtest's default 20 s.
		cl.env = &envtest.Environment{BinaryAssetsDirectory: assets, CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true,
			ControlPlaneStartTimeout: 90 * time.Second}
		// A fixed certificate directory keeps the serving certificate and
		// the client CA across a restart of the API server.
		// kube-apiserver drains its watches when it stops: give it time on a
		// loaded machine.
		// kube-apiserver's graceful stop waits for its open watches up to
		// its request timeout (60 s) after it stops listening; with
		// -shutdown-send-retry-after it answers 429 until its short
		// requests have drained, then closes every connection within 2 s.
		// envtest sends SIGTERM, and SIGKILL after StopTimeout.
		api := &envtest.APIServer{CertDir: t.TempDir(), StopTimeout: 10 * time.Second}
		api.Configure().Set("shutdown-send-retry-after", "true")
		cl.env.ControlPlane.APIServer = api
		h.clusters = append(h.clusters, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg, err := cl.env.Start()
			if err != nil {
				errs[i] = fmt.Errorf("cluster %s: %w", cl.name, err)
				return
			}
			cl.cfg = cfg
			cl.cs = kubernetes.NewForConfigOrDie(cfg)
			cl.gw = gwclient.NewForConfigOrDie(cfg)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, cl := range h.clusters {
			if cl.cfg != nil {
				_ = cl.env.Stop()
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d API servers up in %v", len(specs), time.Since(start).Round(time.Millisecond))

	zs, err := newMemoryZones(newNames(domain))
	if err != nil {
		t.Fatal(err)
	}
	// The library's fencing (record's fence record, compared by the
	// embedded zone) is what refuses a late write.
	h.sh = &shared{zones: zs}
	var sg sync.WaitGroup
	for _, cl := range h.clusters {
		if h.servers[cl.region] != nil {
			continue
		}
		v, err := zs.view(cl.region)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newRegionServer(v, newNames(domain), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h.servers[cl.region] = s
		sg.Add(1)
		go func() { defer sg.Done(); _ = s.Run(ctx, tRefresh) }()
	}
	t.Cleanup(func() {
		for _, tr := range h.replicas {
			tr.stop()
		}
		cancel()
		sg.Wait()
	})
	return h
}

func (h *harness) config(cl *testCluster, pod string) config {
	var inv []string
	for _, c := range h.clusters {
		inv = append(inv, c.name+"="+c.region)
	}
	interval, healthy := tInterval, tHealthy
	if h.interval != 0 {
		interval, healthy = h.interval, h.healthy
	}
	provider := []string{"-provider", "memory"}
	if h.provider != nil {
		provider = h.provider
	}
	args := append([]string{
		"-cluster", cl.name, "-clusters", strings.Join(inv, ","), "-domain", domain,
		"-app-names", app, "-ttl", "1s", "-interval", interval.String(), "-healthy", healthy.String(),
		"-heartbeat-secret", h.secret, "-lease-namespace", "default", "-identity", pod,
		"-lease-duration", tLease.String(), "-renew-deadline", tRenew.String(), "-retry-period", tRetry.String(),
		"-gateway-api", "on", "-dns-addr", "", "-http-addr", "127.0.0.1:0",
	}, provider...)
	cfg, err := parseConfig(args, os.Stderr, func(string) string { return "" })
	if err != nil {
		h.t.Fatal(err)
	}
	return cfg
}

// startReplica runs a replica of cl named pod, through a proxy of its own.
func (h *harness) startReplica(cl *testCluster, pod string) *testReplica {
	t := h.t
	u, err := url.Parse(cl.cfg.Host)
	if err != nil || u.Host == "" {
		t.Fatalf("API server address %q: %v", cl.cfg.Host, err)
	}
	target := u.Host
	tr := &testReplica{name: pod, cl: cl, px: newProxy(t, target), done: make(chan error, 1)}
	rc := rest.CopyConfig(cl.cfg)
	rc.Host = "https://" + tr.px.addr()
	log := slog.New(slog.NewTextHandler(h.logs, nil)).With("replica", pod)
	r, ls, err := setup(h.ctx, h.config(cl, pod), rc, log, h.sh)
	if err != nil {
		t.Fatal(err)
	}
	r.fenced.before = func(zone string, recs []libdns.Record) bool {
		if f := tr.freeze.Load(); f != nil {
			return (*f)(zone, recs)
		}
		return false
	}
	r.fenced.after = func(zone string, recs []libdns.Record, err error) {
		if f := tr.after.Load(); f != nil {
			(*f)(zone, recs, err)
		}
	}
	tr.r = r
	ctx, cancel := context.WithCancel(h.ctx)
	tr.cancel = cancel
	go func() { tr.done <- r.serve(ctx, ls) }()
	h.replicas = append(h.replicas, tr)
	t.Cleanup(tr.stop) // before its proxy closes
	return tr
}

func (tr *testReplica) stop() {
	if tr.cancel == nil {
		return
	}
	tr.cancel()
	tr.cancel = nil
	tr.px.heal()
	<-tr.done
}

// --- fixtures -----------------------------------------------------------

var ctxb = context.Background()

// lbService creates an annotated LoadBalancer Service with ips as its
// load-balancer status and one EndpointSlice per address family, ready.
func lbService(t *testing.T, cl *testCluster, name string, ips ...string) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{Annotation: "edge"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	created, err := cl.cs.CoreV1().Services("default").Create(ctxb, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range ips {
		created.Status.LoadBalancer.Ingress = append(created.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := cl.cs.CoreV1().Services("default").UpdateStatus(ctxb, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	backendSlices(t, cl, name)
}

// backendSlices creates a Service's two EndpointSlices, IPv4 and IPv6,
// one ready endpoint each.
func backendSlices(t *testing.T, cl *testCluster, svc string) {
	for _, fam := range []struct {
		typ  discoveryv1.AddressType
		addr string
	}{{discoveryv1.AddressTypeIPv4, "172.16.0.1"}, {discoveryv1.AddressTypeIPv6, "fd00::1"}} {
		ready := true
		es := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: svc + "-" + strings.ToLower(string(fam.typ)), Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: fam.typ,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{fam.addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		}
		if _, err := cl.cs.DiscoveryV1().EndpointSlices("default").Create(ctxb, es, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// setReady sets every endpoint of every slice of svc ready or not (a
// not-ready endpoint that is terminating, as in a rollout).
func setReady(t *testing.T, cl *testCluster, svc string, ready bool) {
	list, err := cl.cs.DiscoveryV1().EndpointSlices("default").List(ctxb, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		es := &list.Items[i]
		for j := range es.Endpoints {
			r, term := ready, !ready
			es.Endpoints[j].Conditions = discoveryv1.EndpointConditions{Ready: &r, Serving: &r, Terminating: &term}
		}
		if _, err := cl.cs.DiscoveryV1().EndpointSlices("default").Update(ctxb, es, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// gatewayWithRoute creates an annotated Gateway (programmed, with ips as
// its status addresses), an HTTPRoute attached to it and the route's
// backend Service with its slices.
func gatewayWithRoute(t *testing.T, cl *testCluster, name, backend string, ips ...string) {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{Annotation: "edge"}},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}},
	}
	created, err := cl.gw.GatewayV1().Gateways("default").Create(ctxb, gw, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ipType := gatewayv1.IPAddressType
	for _, ip := range ips {
		created.Status.Addresses = append(created.Status.Addresses, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: ip})
	}
	created.Status.Conditions = []metav1.Condition{{
		Type: string(gatewayv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue, Reason: "Programmed",
		ObservedGeneration: created.Generation, LastTransitionTime: metav1.Now(),
	}}
	if _, err := cl.gw.GatewayV1().Gateways("default").UpdateStatus(ctxb, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: backend, Namespace: "default"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if _, err := cl.cs.CoreV1().Services("default").Create(ctxb, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	backendSlices(t, cl, backend)
	port := gatewayv1.PortNumber(80)
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: backend, Namespace: "default"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(name)}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(backend), Port: &port},
			}}}}},
		},
	}
	if _, err := cl.gw.GatewayV1().HTTPRoutes("default").Create(ctxb, route, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// --- DNS ----------------------------------------------------------------

// answer is how app resolves from a region: the CNAME chain after app and
// the addresses (A and AAAA) at its end.
type answer struct {
	chain []string
	addrs []string
}

func (a answer) String() string {
	return strings.Join(a.chain, " → ") + " " + strings.Join(a.addrs, " ")
}

func (h *harness) resolve(region string) (answer, error) {
	var a answer
	c := &dns.Client{Timeout: time.Second}
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		m := new(dns.Msg)
		m.SetQuestion(app, qt)
		r, _, err := c.Exchange(m, h.servers[region].Addr())
		if err != nil {
			return a, err
		}
		var chain []string
		for _, rr := range r.Answer {
			switch rr := rr.(type) {
			case *dns.CNAME:
				chain = append(chain, strings.ToLower(rr.Target))
			case *dns.A:
				a.addrs = append(a.addrs, rr.A.String())
			case *dns.AAAA:
				a.addrs = append(a.addrs, rr.AAAA.String())
			}
		}
		if qt == dns.TypeA {
			a.chain = chain
		} else if !slices.Equal(chain, a.chain) {
			return a, fmt.Errorf("A chain %v, AAAA chain %v", a.chain, chain)
		}
	}
	slices.SortFunc(a.addrs, func(x, y string) int { return netip.MustParseAddr(x).Compare(netip.MustParseAddr(y)) })
	return a, nil
}

func want(target string, addrs ...string) answer {
	addrs = slices.Clone(addrs)
	slices.SortFunc(addrs, func(x, y string) int { return netip.MustParseAddr(x).Compare(netip.MustParseAddr(y)) })
	return answer{chain: []string{globalN, target}, addrs: addrs}
}

// waitAnswers waits until every region given answers as wanted, and
// returns how long that took. The limit is a hang guard, not a bound.
func (h *harness) waitAnswers(what string, limit time.Duration, wants map[string]answer) time.Duration {
	h.t.Helper()
	start := time.Now()
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	var last string
	for {
		ok := true
		var got []string
		for region, w := range wants {
			a, err := h.resolve(region)
			got = append(got, fmt.Sprintf("%s: %v %v", region, a, err))
			if err != nil || !slices.Equal(a.chain, w.chain) || !slices.Equal(a.addrs, w.addrs) {
				ok = false
			}
		}
		if ok {
			return time.Since(start)
		}
		last = strings.Join(got, "; ")
		if time.Since(start) > limit {
			h.t.Fatalf("%s: not converged after %v: %s", what, limit, last)
		}
		<-tk.C
	}
}

// waitFor waits until cond holds and returns how long that took.
func (h *harness) waitFor(what string, limit time.Duration, cond func() bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	for !cond() {
		if time.Since(start) > limit {
			h.t.Fatalf("%s: not after %v", what, limit)
		}
		<-tk.C
	}
	return time.Since(start)
}

// report logs a scenario's time and fails the test when it exceeds the
// bound.
func report(t *testing.T, scenario string, measured, bound time.Duration) {
	t.Helper()
	t.Logf("SCENARIO %-40s measured %-8v bound %v", scenario, measured.Round(time.Millisecond), bound)
	if measured > bound {
		t.Errorf("%s: %v, over its bound %v", scenario, measured.Round(time.Millisecond), bound)
	}
}

// readyProblems returns the problems a replica's /readyz lists.
func readyProblems(t *testing.T, tr *testReplica) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	tr.r.httpHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	var body struct {
		Problems []struct {
			Name string `json:"name"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/readyz: %v: %s", err, rec.Body.String())
	}
	var out []string
	for _, p := range body.Problems {
		out = append(out, p.Name)
	}
	return out
}

// --- the scenarios ------------------------------------------------------

// eu-west: cluster eu-1, two replicas, two LoadBalancer Services.
// us-east: cluster us-1, one replica, a Gateway (with an HTTPRoute) and a
// LoadBalancer Service.
var (
	euGW1 = []string{"10.1.1.1", "2001:db8:1::1"}
	euGW2 = []string{"10.1.1.2", "2001:db8:1::2"}
	usGW  = []string{"10.2.1.1", "2001:db8:2::1"}
	usLB  = []string{"10.2.1.2", "2001:db8:2::2"}
)

func cat(ss ...[]string) []string { return slices.Concat(ss...) }

// normalAnswers is every region answering its own gateways.
func normalAnswers() map[string]answer {
	return map[string]answer{
		"eu-west": want(regionalN, cat(euGW1, euGW2)...),
		"us-east": want(regionalN, cat(usGW, usLB)...),
	}
}

func TestKubernetes(t *testing.T) {
	h := newHarness(t, [2]string{"eu-1", "eu-west"}, [2]string{"us-1", "us-east"})
	eu, us := h.clusters[0], h.clusters[1]
	lbService(t, eu, "gw1", euGW1...)
	lbService(t, eu, "gw2", euGW2...)
	gatewayWithRoute(t, us, "edge-gw", "app", usGW...)
	lbService(t, us, "lb", usLB...)

	a := h.startReplica(eu, "eu-a")
	b := h.startReplica(eu, "eu-b")
	h.startReplica(us, "us-a")

	normal := normalAnswers()
	d := h.waitAnswers("start", 60*time.Second, normal)
	t.Logf("converged from start in %v", d.Round(time.Millisecond))

	t.Run("endpoints-not-ready", func(t *testing.T) {
		setReady(t, eu, "gw1", false)
		d := h.waitAnswers("gw1 not ready", 30*time.Second, map[string]answer{"eu-west": want(regionalN, euGW2...)})
		// The reconcile on the watch event, the DNS copy's refresh.
		report(t, "memory: endpoints not ready", d, tRefresh+tWork)
		setReady(t, eu, "gw1", true)
		h.waitAnswers("gw1 ready again", 30*time.Second, normal)
	})

	t.Run("region-failover", func(t *testing.T) { h.regionFailover(t, "memory", us, tInterval, tHealthy, tRefresh, 0, tWork) })

	t.Run("leader-frozen", func(t *testing.T) {
		local, err := h.sh.zones.view("eu-west")
		if err != nil {
			t.Fatal(err)
		}
		h.lateWrite(t, "memory", lateRecords, a, b, local)
		h.lateWrite(t, "memory", lateBeats, a, b, local)
	})

	t.Run("api-server-stop-restart", func(t *testing.T) {
		// us-1's API server stops (SIGTERM; envtest sends SIGKILL after
		// its StopTimeout), then starts again on the same port and etcd.
		var usA *testReplica
		for _, tr := range h.replicas {
			if tr.cl == us {
				usA = tr
			}
		}
		api := us.env.ControlPlane.APIServer
		stopped := make(chan error, 1)
		var took time.Duration
		go func() {
			stop := time.Now()
			err := api.Stop()
			took = time.Since(stop)
			stopped <- err
		}()
		failover := want(failoverN, cat(euGW1, euGW2)...)
		d := h.waitAnswers("us-1's API server stopped", 60*time.Second, map[string]answer{"eu-west": failover})
		// us-1's leader's last successful renewal was sent before the
		// stop; its term ends a renew deadline later, and its last beat,
		// stamped then at the latest, is stale after healthy + skew (one
		// interval); eu-1's leader reads every interval.
		report(t, "API server stopped → failover", d, tRenew+tHealthy+2*tInterval+tRefresh+tWork)
		if err := <-stopped; err != nil {
			t.Logf("kube-apiserver stop: %v (killed)", err)
		}
		t.Logf("kube-apiserver stopped in %v", took.Round(time.Millisecond))
		h.waitFor("/readyz reports api_unreachable", 60*time.Second, func() bool {
			return slices.Contains(readyProblems(t, usA), "api_unreachable")
		})

		start := time.Now()
		if err := api.Start(); err != nil {
			t.Fatalf("restarting kube-apiserver: %v", err)
		}
		up := time.Now()
		t.Logf("kube-apiserver up again in %v", up.Sub(start).Round(time.Millisecond))
		// The first Lease request that reaches the server comes within a
		// request timeout and a jittered retry period; /readyz clears on
		// its answer, before any informer event.
		h.waitFor("/readyz clears api_unreachable", 60*time.Second, func() bool {
			return !slices.Contains(readyProblems(t, usA), "api_unreachable")
		})
		report(t, "API server back → /readyz clear", time.Since(up), tRequest+tJitter+tWork)
		h.waitAnswers("us-1's API server back", 60*time.Second, normal)
		// That request first sees the old term's record; a candidate takes
		// a lease it has seen unchanged for a lease duration, at its next
		// jittered attempt; the new leader beats within an interval, and
		// eu-1 reads it within another.
		report(t, "API server back → region back", time.Since(up), tRequest+tLease+2*tJitter+2*tInterval+tRefresh+tWork)
	})

	// The same controllers writing to BIND (RFC 2136) and to Route 53
	// (moto), each on a Lease of its own; the replicas above stop first.
	for _, tr := range h.replicas {
		tr.stop()
	}
	t.Run("rfc2136", func(t *testing.T) { h.storeScenarios(t, bindCase(t)) })
	t.Run("route53", func(t *testing.T) { h.storeScenarios(t, motoCase(t)) })
}
