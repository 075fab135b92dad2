package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// Resolver resolves a host name to addresses. *net.Resolver satisfies it.
// Implementations must honour ctx.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// AddressConfig configures the external-address signal. Start from
// DefaultAddressConfig; a zero field takes its default, except MaxStale,
// whose 0 means "keep no answer once lookups fail". In JSON the durations
// are strings such as "30s".
type AddressConfig struct {
	// Refresh is how often Run resolves the hostname, 100ms–1h. Default
	// (and 0) 30s.
	Refresh time.Duration `json:"refresh"`
	// Timeout bounds one lookup, 10ms–Refresh. Default (and 0) 5s.
	Timeout time.Duration `json:"timeout"`
	// MaxStale is how long the last good answer is kept while lookups fail
	// with temporary errors (timeouts, SERVFAIL); a lookup that says the
	// name does not exist, or has no address, ends it at once. 0–24h.
	// Default 90s.
	MaxStale time.Duration `json:"maxStale"`
}

// withDefaults fills the zero fields that take a default.
func (c AddressConfig) withDefaults() AddressConfig {
	d := DefaultAddressConfig()
	if c.Refresh == 0 {
		c.Refresh = d.Refresh
	}
	if c.Timeout == 0 {
		c.Timeout = min(d.Timeout, c.Refresh)
	}
	return c
}

// MarshalJSON writes the durations as strings such as "30s".
func (c AddressConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(addressJSON{jsontime.Duration(c.Refresh), jsontime.Duration(c.Timeout), jsontime.Duration(c.MaxStale)})
}

// UnmarshalJSON reads the durations as strings such as "30s" or numbers of
// seconds; absent fields keep their values.
func (c *AddressConfig) UnmarshalJSON(b []byte) error {
	j := addressJSON{jsontime.Duration(c.Refresh), jsontime.Duration(c.Timeout), jsontime.Duration(c.MaxStale)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	c.Refresh, c.Timeout, c.MaxStale = j.Refresh.D(), j.Timeout.D(), j.MaxStale.D()
	return nil
}

type addressJSON struct {
	Refresh  jsontime.Duration `json:"refresh"`
	Timeout  jsontime.Duration `json:"timeout"`
	MaxStale jsontime.Duration `json:"maxStale"`
}

// DefaultAddressConfig returns the defaults.
func DefaultAddressConfig() AddressConfig {
	return AddressConfig{Refresh: 30 * time.Second, Timeout: 5 * time.Second, MaxStale: 90 * time.Second}
}

// Validate reports the first field out of range as a *FieldError (zero
// fields take their defaults first).
func (c AddressConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Refresh < 100*time.Millisecond || c.Refresh > time.Hour:
		return fieldErr("refresh", c.Refresh, fielderr.DurationRange(100*time.Millisecond, time.Hour))
	case c.Timeout < 10*time.Millisecond || c.Timeout > c.Refresh:
		return fieldErr("timeout", c.Timeout, "[10ms, refresh ("+fielderr.Duration(c.Refresh)+")]")
	case c.MaxStale < 0 || c.MaxStale > 24*time.Hour:
		return fieldErr("maxStale", c.MaxStale, fielderr.DurationRange(0, 24*time.Hour))
	}
	return nil
}

// ExternalAddress is the external-address signal of one load-balancer
// service: healthy when the service has a load-balancer IP, or a hostname
// that resolves. The caller feeds the service's status with SetStatus; Run
// resolves a hostname in the background and caches the last answer with
// its time. Safe for concurrent use.
type ExternalAddress struct {
	cfg AddressConfig
	res Resolver
	now func() time.Time

	mu       sync.Mutex
	ips      []netip.Addr
	hostname string
	answer   []netip.Addr
	answered time.Time // when answer was obtained
	lastErr  error
	kick     chan struct{}
	running  atomic.Bool
	onChange atomic.Pointer[func()]
}

// NewExternalAddress returns the signal; res nil means net.DefaultResolver.
func NewExternalAddress(cfg AddressConfig, res Resolver) (*ExternalAddress, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if res == nil {
		res = net.DefaultResolver
	}
	return &ExternalAddress{cfg: cfg, res: res, now: time.Now, kick: make(chan struct{}, 1)}, nil
}

// SetStatus records the service's load-balancer ingress: IP addresses
// and/or a hostname. A new hostname is resolved at once by Run.
func (a *ExternalAddress) SetStatus(ips []netip.Addr, hostname string) {
	a.mu.Lock()
	a.ips = append([]netip.Addr(nil), ips...)
	if hostname != a.hostname {
		a.hostname = hostname
		a.answer, a.answered, a.lastErr = nil, time.Time{}, nil
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
	a.mu.Unlock()
}

// Addresses returns the addresses the signal knows (the IPs, else the last
// answer for the hostname) and the age of that answer at now (0 for IPs).
func (a *ExternalAddress) Addresses(now time.Time) ([]netip.Addr, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ips) > 0 {
		return append([]netip.Addr(nil), a.ips...), 0
	}
	if len(a.answer) == 0 {
		return nil, 0
	}
	return append([]netip.Addr(nil), a.answer...), now.Sub(a.answered)
}

// Check passes with a load-balancer IP, or with a hostname whose last good
// answer is at most MaxStale older than the last failed lookup.
func (a *ExternalAddress) Check(now time.Time) Signal {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case len(a.ips) > 0:
		return Signal{Healthy: true}
	case a.hostname == "":
		return Fail("no external address")
	case len(a.answer) > 0:
		if age := now.Sub(a.answered); a.lastErr != nil && age > a.cfg.MaxStale {
			return Fail("hostname %s: last answer %s old, lookups failing: %v", a.hostname, age.Round(time.Second), a.lastErr)
		}
		return Signal{Healthy: true}
	case a.lastErr != nil:
		return Fail("hostname %s does not resolve: %v", a.hostname, a.lastErr)
	}
	return Fail("hostname %s not resolved yet", a.hostname)
}

// OnChange registers f to be called after a lookup changes what the
// signal knows: the hostname's addresses, or whether its lookups fail. A
// controller driven by watch events (a Kubernetes informer, say) uses it
// to re-evaluate at once instead of polling Check; SetStatus does not call
// f, since the caller knows of that change. f runs on the resolving
// goroutine and must not block; nil removes it.
func (a *ExternalAddress) OnChange(f func()) {
	if f == nil {
		a.onChange.Store(nil)
		return
	}
	a.onChange.Store(&f)
}

// Resolve looks the hostname up once and updates the cache.
func (a *ExternalAddress) Resolve(ctx context.Context) error {
	changed, err := a.resolve(ctx)
	if changed {
		if f := a.onChange.Load(); f != nil {
			(*f)()
		}
	}
	return err
}

func (a *ExternalAddress) resolve(ctx context.Context) (changed bool, err error) {
	if a.res == nil {
		return false, ErrNotConfigured
	}
	a.mu.Lock()
	host := a.hostname
	a.mu.Unlock()
	if host == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	ips, err := a.res.LookupNetIP(ctx, "ip", host)
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if host != a.hostname {
		return false, nil // changed meanwhile; the next round resolves the new one
	}
	if err == nil && len(ips) == 0 {
		err = fmt.Errorf("%w: %s", errNoAddresses, host)
	}
	if err != nil {
		changed = a.lastErr == nil
		a.lastErr = err
		if permanentLookupError(err) {
			changed = changed || len(a.answer) > 0
			a.answer = nil
		}
		return changed, err
	}
	changed = a.lastErr != nil || !slices.Equal(a.answer, ips)
	a.answer, a.answered, a.lastErr = ips, now, nil
	return changed, nil
}

var errNoAddresses = errors.New("health: no addresses")

// permanentLookupError reports whether a lookup error says the name has no
// address (not found, or an empty answer), as opposed to a lookup that
// could not be made (timeout, SERVFAIL), which keeps the last answer.
func permanentLookupError(err error) bool {
	if errors.Is(err, errNoAddresses) {
		return true
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.IsNotFound
	}
	return false
}

// Run resolves the hostname every Refresh (and at once when it changes)
// until ctx is done; it returns nil then. Lookup errors are kept for Check,
// not returned.
func (a *ExternalAddress) Run(ctx context.Context) error {
	if a.res == nil {
		return ErrNotConfigured
	}
	if !a.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer a.running.Store(false)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-a.kick:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		_ = a.Resolve(ctx)
		t.Reset(a.cfg.Refresh)
	}
}
