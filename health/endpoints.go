package health

import (
	"sync"
	"time"
)

// EndpointConditions are a Kubernetes endpoint's conditions, as an
// EndpointSlice reports them. A nil pointer means "unknown".
type EndpointConditions struct {
	// Ready: the endpoint can take new traffic. Kubernetes says consumers
	// should read nil as ready.
	Ready *bool `json:"ready,omitempty"`
	// Serving: like Ready, but also reported while terminating.
	Serving *bool `json:"serving,omitempty"`
	// Terminating: the endpoint is shutting down.
	Terminating *bool `json:"terminating,omitempty"`
}

// Endpoint is one endpoint of an EndpointSlice.
type Endpoint struct {
	// Addresses are the endpoint's IP addresses.
	Addresses []string `json:"addresses"`
	// Conditions are its readiness conditions.
	Conditions EndpointConditions `json:"conditions"`
}

// IsReady reports whether the endpoint counts as ready for a GSLB verdict:
// Ready true or nil (Kubernetes' rule), and not terminating. A terminating
// endpoint that is still serving drains its connections; it does not make
// a gateway healthy.
func (e Endpoint) IsReady() bool {
	if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
		return false
	}
	return e.Conditions.Ready == nil || *e.Conditions.Ready
}

// EndpointSlice is the part of a Kubernetes EndpointSlice the readiness
// signal needs. The caller copies it from its informer; the library has no
// Kubernetes client.
type EndpointSlice struct {
	// Name is the slice's name (unique within the service).
	Name string `json:"name"`
	// Endpoints are the slice's endpoints.
	Endpoints []Endpoint `json:"endpoints"`
}

// EndpointReadiness is the endpoint-readiness signal of one service: healthy
// when at least one endpoint across its slices is ready. The caller feeds it
// with Set and Delete from its watch of EndpointSlices; Check reads it. It
// is safe for concurrent use. The zero value has no slices (unhealthy).
type EndpointReadiness struct {
	mu     sync.Mutex
	slices map[string]EndpointSlice
}

// Set stores (or replaces) one slice.
func (r *EndpointReadiness) Set(s EndpointSlice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slices == nil {
		r.slices = map[string]EndpointSlice{}
	}
	r.slices[s.Name] = s
}

// Delete forgets a slice.
func (r *EndpointReadiness) Delete(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.slices, name)
}

// Ready returns how many endpoints are ready, and how many there are.
func (r *EndpointReadiness) Ready() (ready, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slices {
		for _, e := range s.Endpoints {
			total++
			if e.IsReady() {
				ready++
			}
		}
	}
	return ready, total
}

// Check passes when at least one endpoint is ready.
func (r *EndpointReadiness) Check(time.Time) Signal {
	ready, total := r.Ready()
	if ready > 0 {
		return Signal{Healthy: true}
	}
	if total == 0 {
		return Fail("no endpoints")
	}
	return Fail("0 of %d endpoints ready", total)
}
