package main

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	listersdiscoveryv1 "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/gslbkit/gslb/health"
)

// watcher keeps the cluster's objects the controller reads in informers'
// caches: Services, EndpointSlices and, with the Gateway API installed,
// Gateways and HTTPRoutes. Every change kicks the controller; nothing
// polls the API server (resync is off: the watch is the only source).
type watcher struct {
	services  listerscorev1.ServiceLister
	slices    listersdiscoveryv1.EndpointSliceLister
	gateways  gwlisters.GatewayLister   // nil without the Gateway API
	routes    gwlisters.HTTPRouteLister // nil without the Gateway API
	synced    []cache.InformerSynced
	kick      chan struct{}
	connected atomic.Bool // false after a watch error, true again on the next event, sync or answer

	mu        sync.Mutex
	watchErr  string
	watchErrT time.Time
	// byStatus: the last watch error was the API server's answer (a
	// status such as forbidden), not a failed connection; an answer to
	// another request does not clear it.
	byStatus bool
	// failingSince is when the first request (the Lease's) since the API
	// server's last answer failed; zero while it answers. reqErr is the
	// last failure. After unreachableAfter of failures the API server is
	// reported unreachable.
	failingSince     time.Time
	reqErr           string
	unreachableAfter time.Duration

	start func(stop <-chan struct{})
	wait  func()
}

// newWatcher sets up the informers; run starts them.
func newWatcher(cs kubernetes.Interface, gw gwclient.Interface, namespace string) (*watcher, error) {
	w := &watcher{kick: make(chan struct{}, 1)}
	w.connected.Store(true)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	svc := f.Core().V1().Services()
	eps := f.Discovery().V1().EndpointSlices()
	w.services, w.slices = svc.Lister(), eps.Lister()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.changed() },
		UpdateFunc: func(any, any) { w.changed() },
		DeleteFunc: func(any) { w.changed() },
	}
	var infs []cache.SharedIndexInformer
	infs = append(infs, svc.Informer(), eps.Informer())
	var gf gwinformers.SharedInformerFactory
	if gw != nil {
		gf = gwinformers.NewSharedInformerFactoryWithOptions(gw, 0, gwinformers.WithNamespace(namespace))
		g, r := gf.Gateway().V1().Gateways(), gf.Gateway().V1().HTTPRoutes()
		w.gateways, w.routes = g.Lister(), r.Lister()
		infs = append(infs, g.Informer(), r.Informer())
	}
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, err
		}
		if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			w.watchError(err)
		}); err != nil {
			return nil, err
		}
		w.synced = append(w.synced, inf.HasSynced)
	}
	w.start = func(stop <-chan struct{}) {
		f.Start(stop)
		if gf != nil {
			gf.Start(stop)
		}
	}
	w.wait = func() {
		f.Shutdown()
		if gf != nil {
			gf.Shutdown()
		}
	}
	return w, nil
}

// run starts the informers and waits for their caches; it returns when ctx
// ends, once the informers have stopped.
func (w *watcher) run(ctx context.Context) {
	w.start(ctx.Done())
	<-ctx.Done()
	w.wait()
}

// hasSynced reports whether every cache has been filled once.
func (w *watcher) hasSynced() bool {
	for _, s := range w.synced {
		if !s() {
			return false
		}
	}
	return true
}

func (w *watcher) changed() {
	w.connected.Store(true)
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *watcher) watchError(err error) {
	var st apierrors.APIStatus
	w.mu.Lock()
	if w.connected.Load() {
		w.watchErrT = time.Now()
	}
	w.watchErr = err.Error()
	w.byStatus = errors.As(err, &st)
	w.connected.Store(false)
	w.mu.Unlock()
	w.changed2()
}

// answered is called whenever the API server answers a request of the
// replica other than the watches' (the Lease's, every retry period, leader
// or not): the server is reachable, so a watch that failed for want of a
// connection is no longer reported, even before the informers' next event
// (a reflector resumes its watch from the last resource version it saw,
// and an unchanged namespace sends nothing).
func (w *watcher) answered() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failingSince, w.reqErr = time.Time{}, ""
	if !w.connected.Load() && !w.byStatus {
		w.connected.Store(true)
	}
}

// unanswered is called when such a request got no answer. A reflector
// never reports an API server that is down: it retries a refused watch
// with its backoff, and client-go turns a watch cut at connection into an
// empty one that ends at once, so its error handler is not called.
func (w *watcher) unanswered(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failingSince.IsZero() {
		w.failingSince = time.Now()
	}
	w.reqErr = err.Error()
}

// changed2 kicks without marking the watch connected.
func (w *watcher) changed2() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// watchProblem returns the last watch error and since when the watch has
// been failing, while it is; or, while the API server has not answered
// for unreachableAfter, the last request's error and since when.
func (w *watcher) watchProblem(now time.Time) (string, time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.connected.Load() {
		return "watch failing: " + w.watchErr, w.watchErrT, true
	}
	if !w.failingSince.IsZero() && now.Sub(w.failingSince) >= w.unreachableAfter {
		return "no answer: " + w.reqErr, w.failingSince, true
	}
	return "", time.Time{}, false
}

// gateway is one gateway of this cluster (an annotated Service or
// Gateway) and its signals, fed from the caches.
type gateway struct {
	key        string // "service/ns/name" or "gateway/ns/name"
	endpoints  *health.EndpointReadiness
	external   *health.ExternalAddress
	programmed atomic.Bool // Gateway API: condition Programmed is True
	routes     atomic.Int32
	gate       *health.Gate
	fed        map[string]bool // slice names fed to endpoints
	stop       context.CancelFunc
	done       chan struct{}
}

func newGateway(ctx context.Context, key string, isGateway bool, kick func(), resolver health.Resolver) (*gateway, error) {
	ext, err := health.NewExternalAddress(health.DefaultAddressConfig(), resolver)
	if err != nil {
		return nil, err
	}
	ext.OnChange(kick)
	g := &gateway{key: key, endpoints: new(health.EndpointReadiness), external: ext, fed: map[string]bool{}, done: make(chan struct{})}
	checks := []health.GateCheck{
		{Name: "endpoints", Check: g.endpoints},
		{Name: "address", Check: ext},
	}
	if isGateway {
		checks = []health.GateCheck{
			{Name: "programmed", Check: health.CheckFunc(func(time.Time) health.Signal {
				if g.programmed.Load() {
					return health.Pass()
				}
				return health.Fail("condition Programmed is not True")
			})},
			{Name: "address", Check: ext},
			{Name: "backends", Check: health.CheckFunc(func(now time.Time) health.Signal {
				if g.routes.Load() == 0 {
					return health.Fail("no HTTPRoute attached")
				}
				return g.endpoints.Check(now)
			})},
		}
	}
	if g.gate, err = health.NewGate(checks...); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	g.stop = cancel
	go func() {
		defer close(g.done)
		_ = ext.Run(rctx) // resolves a load-balancer hostname in the background
	}()
	return g, nil
}

func (g *gateway) close() {
	g.stop()
	<-g.done
}

// feed replaces the slices fed to the endpoint signal by slices.
func (g *gateway) feed(ss []health.EndpointSlice) {
	seen := map[string]bool{}
	for _, s := range ss {
		g.endpoints.Set(s)
		seen[s.Name] = true
	}
	for n := range g.fed {
		if !seen[n] {
			g.endpoints.Delete(n)
		}
	}
	g.fed = seen
}

// gatewaySet is the cluster's gateways as the leader last synced them from
// the caches. Owned by the leader's loop.
type gatewaySet struct {
	w        *watcher
	service  string
	resolver health.Resolver
	byKey    map[string]*gateway
}

// sync brings the set up to date with the caches: it adds and removes
// gateways and feeds every gateway's signals.
func (s *gatewaySet) sync(ctx context.Context) error {
	seen := map[string]bool{}
	svcs, err := s.w.services.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, svc := range svcs {
		if svc.Annotations[Annotation] != s.service {
			continue
		}
		g, err := s.get(ctx, "service/"+svc.Namespace+"/"+svc.Name, false)
		if err != nil {
			return err
		}
		seen[g.key] = true
		ips, host := lbStatus(svc.Status.LoadBalancer.Ingress)
		g.external.SetStatus(ips, host)
		g.feed(s.serviceSlices(svc.Namespace, svc.Name, ""))
	}
	if s.w.gateways != nil {
		gws, err := s.w.gateways.List(labels.Everything())
		if err != nil {
			return err
		}
		routes, err := s.w.routes.List(labels.Everything())
		if err != nil {
			return err
		}
		for _, gw := range gws {
			if gw.Annotations[Annotation] != s.service {
				continue
			}
			g, err := s.get(ctx, "gateway/"+gw.Namespace+"/"+gw.Name, true)
			if err != nil {
				return err
			}
			seen[g.key] = true
			var ips []netip.Addr
			host := ""
			for _, a := range gw.Status.Addresses {
				if a.Type != nil && *a.Type == gatewayv1.HostnameAddressType {
					host = a.Value
					continue
				}
				if ip, err := netip.ParseAddr(a.Value); err == nil {
					ips = append(ips, ip.Unmap())
				}
			}
			g.external.SetStatus(ips, host)
			g.programmed.Store(conditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed), gw.Generation))
			n, backends := attached(gw, routes)
			g.routes.Store(int32(n))
			var ss []health.EndpointSlice
			for _, b := range backends {
				ss = append(ss, s.serviceSlices(b[0], b[1], b[0]+"/"+b[1]+"/")...)
			}
			g.feed(ss)
		}
	}
	for k, g := range s.byKey {
		if !seen[k] {
			g.close()
			delete(s.byKey, k)
		}
	}
	return nil
}

func (s *gatewaySet) get(ctx context.Context, key string, isGateway bool) (*gateway, error) {
	if g, ok := s.byKey[key]; ok {
		return g, nil
	}
	g, err := newGateway(ctx, key, isGateway, s.w.changed2, s.resolver)
	if err != nil {
		return nil, err
	}
	s.byKey[key] = g
	return g, nil
}

// close stops every gateway's background lookups.
func (s *gatewaySet) close() {
	for k, g := range s.byKey {
		g.close()
		delete(s.byKey, k)
	}
}

// sorted returns the gateways in key order.
func (s *gatewaySet) sorted() []*gateway {
	out := make([]*gateway, 0, len(s.byKey))
	for _, g := range s.byKey {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// serviceSlices returns every EndpointSlice of a Service (every address
// family, every slice), as the health package reads them, named prefix +
// the slice's name.
func (s *gatewaySet) serviceSlices(ns, name, prefix string) []health.EndpointSlice {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	list, err := s.w.slices.EndpointSlices(ns).List(sel)
	if err != nil {
		return nil
	}
	out := make([]health.EndpointSlice, 0, len(list))
	for _, es := range list {
		hs := health.EndpointSlice{Name: prefix + es.Name}
		for _, e := range es.Endpoints {
			hs.Endpoints = append(hs.Endpoints, health.Endpoint{
				Addresses: slices.Clone(e.Addresses),
				Conditions: health.EndpointConditions{
					Ready: e.Conditions.Ready, Serving: e.Conditions.Serving, Terminating: e.Conditions.Terminating,
				},
			})
		}
		out = append(out, hs)
	}
	return out
}

// lbStatus returns a Service's load-balancer IPs (both families) and its
// first hostname.
func lbStatus(ing []corev1.LoadBalancerIngress) ([]netip.Addr, string) {
	var ips []netip.Addr
	host := ""
	for _, i := range ing {
		if ip, err := netip.ParseAddr(i.IP); err == nil {
			ips = append(ips, ip.Unmap())
		} else if i.Hostname != "" && host == "" {
			host = i.Hostname
		}
	}
	return ips, host
}

// attached returns how many HTTPRoutes are attached to gw, and the
// Services (namespace, name) their rules send traffic to.
func attached(gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute) (int, [][2]string) {
	n := 0
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, r := range routes {
		if !refersTo(r, gw) {
			continue
		}
		n++
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				if b.Group != nil && *b.Group != "" || b.Kind != nil && *b.Kind != "Service" {
					continue
				}
				ns := r.Namespace
				if b.Namespace != nil {
					ns = string(*b.Namespace)
				}
				k := [2]string{ns, string(b.Name)}
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	return n, out
}

func refersTo(r *gatewayv1.HTTPRoute, gw *gatewayv1.Gateway) bool {
	for _, p := range r.Spec.ParentRefs {
		if p.Group != nil && string(*p.Group) != gatewayv1.GroupName || p.Kind != nil && *p.Kind != "Gateway" {
			continue
		}
		ns := r.Namespace
		if p.Namespace != nil {
			ns = string(*p.Namespace)
		}
		if ns == gw.Namespace && string(p.Name) == gw.Name {
			return true
		}
	}
	return false
}

// conditionTrue reports whether the condition typ is True for the
// object's current generation.
func conditionTrue(conds []metav1.Condition, typ string, gen int64) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration >= gen)
		}
	}
	return false
}
