package grpcprobe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net"
	"slices"
	"strconv"
	"sync"

	"github.com/gslbkit/gslb/internal/hostport"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/internal/probecall"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Config configures a gRPC health prober (grpc.health.v1.Health/Check).
// JSON names follow Envoy Gateway's gRPC health checker (service) and
// overrides.port. The zero value checks the server's overall health over
// plain text.
type Config struct {
	// Service is the service name sent in the request; empty asks about
	// the server as a whole.
	Service string `json:"service,omitempty"`
	// Authority is the :authority header (and the default TLS server
	// name); empty means the target's host:port.
	Authority string `json:"authority,omitempty"`
	// TLS, when not nil, makes the prober use TLS with these options.
	TLS *probe.TLSConfig `json:"tls,omitempty"`
	// Port, when not 0, replaces the target's port; 1–65535.
	Port int `json:"port,omitempty"`
}

// DefaultConfig returns a check of the server's overall health.
func DefaultConfig() Config { return Config{} }

// ErrInvalidConfig is wrapped by every Config validation error.
var ErrInvalidConfig = errors.New("grpcprobe: invalid config")

// ErrConfig is ErrInvalidConfig, by its former name: errors.Is matches
// either.
//
// Deprecated: use ErrInvalidConfig.
var ErrConfig = ErrInvalidConfig

// Validate checks the fields; an error is a *probe.FieldError naming the
// field, the value and what is allowed, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	if c.Port < 0 || c.Port > 65535 {
		return &probe.FieldError{Path: "port", Value: strconv.Itoa(c.Port), Allowed: "[1, 65535], or 0 for the target's port", Err: ErrInvalidConfig}
	}
	for i := 0; i < len(c.Authority); i++ {
		if b := c.Authority[i]; b <= ' ' || b >= 0x7f || b == '/' {
			return &probe.FieldError{Path: "authority", Value: strconv.Quote(c.Authority),
				Allowed: fmt.Sprintf("host or host:port (character %q at %d)", b, i), Err: ErrInvalidConfig}
		}
	}
	if err := c.TLS.Validate(); err != nil {
		var fe *probe.FieldError
		if errors.As(err, &fe) {
			return fielderr.In("tls", ErrInvalidConfig, err)
		}
		return fmt.Errorf("%w: tls: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Prober probes a server with the standard gRPC health-checking protocol,
// through google.golang.org/grpc's generated health client. Each probe
// opens its own connection and closes it before returning (simple and
// leak-free; a shared connection would hide reconnect failures behind
// grpc-go's back-off). Classification follows Envoy's rule 5:
//
//   - SERVING → probe.Pass (Code 1);
//   - any other reply — NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN — → probe.FailNow
//     (probe.KindStatus, Code the serving status);
//   - an RPC that ends with a status other than OK — Unimplemented (no
//     health service), NotFound (unknown service), Internal (a malformed
//     reply), … — → probe.FailNow (probe.KindStatus), except:
//   - Unavailable, which grpc-go also uses for connection failures and
//     resets, and DeadlineExceeded → probe.Fail (it counts toward the threshold).
//
// Probe is safe for concurrent use.
type Prober struct {
	cfg    Config
	addr   string
	tls    *tls.Config // nil = plain text
	dialer net.Dialer
}

var _ probe.Prober = (*Prober)(nil)

// New returns a gRPC health prober for addr ("host:port", "[v6]:port";
// a port is required unless cfg.Port is set). cfg is validated and copied;
// files named in cfg.TLS are read now.
func New(addr string, cfg Config) (*Prober, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := hostport.Split(addr, "", cfg.Port)
	if err != nil {
		return nil, err
	}
	g := &Prober{cfg: cfg, addr: net.JoinHostPort(host, port)}
	if cfg.TLS != nil {
		t := *cfg.TLS
		t.Curves = slices.Clone(t.Curves)
		g.cfg.TLS = &t
		sni := host
		if cfg.Authority != "" {
			sni = cfg.Authority
			if h, _, err := net.SplitHostPort(sni); err == nil {
				sni = h
			}
		}
		if g.tls, err = cfg.TLS.ClientConfig(sni, "h2"); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Addr returns the host:port the prober connects to.
func (g *Prober) Addr() string { return g.addr }

// Probe performs one Health/Check call. ctx's deadline is the probe's
// timeout. A zero Prober (not made by New) fails every probe.
func (g *Prober) Probe(ctx context.Context) probe.Result {
	if g.addr == "" {
		return probe.Result{Status: probe.Fail, Kind: probe.KindOther, Detail: "grpcprobe: prober not configured (use New)"}
	}
	return probecall.Timed(ctx, g.probe)
}

func (g *Prober) probe(ctx context.Context) probe.Result {
	// The prober dials and does the TLS handshake itself, so it knows why a
	// transport failed; grpc-go sees a ready connection. The dial runs on a
	// grpc-go goroutine, hence the lock.
	var (
		mu      sync.Mutex
		dialErr error
	)
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := g.dialer.DialContext(ctx, "tcp", addr)
		if err == nil && g.tls != nil {
			tc := tls.Client(c, g.tls)
			if err = tc.HandshakeContext(ctx); err != nil {
				_ = c.Close()
			} else if tc.ConnectionState().NegotiatedProtocol != "h2" {
				_ = c.Close()
				err = fmt.Errorf("%w: server did not negotiate h2", probe.ErrTLSConfig)
			}
			c = tc
		}
		if err != nil {
			mu.Lock()
			dialErr = err
			mu.Unlock()
			return nil, err
		}
		return c, nil
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial),
	}
	if g.cfg.Authority != "" {
		opts = append(opts, grpc.WithAuthority(g.cfg.Authority))
	}
	conn, err := grpc.NewClient("passthrough:///"+g.addr, opts...)
	if err != nil {
		return probe.Result{Status: probe.Fail, Kind: probe.KindOther, Detail: "grpc client: " + err.Error()}
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: g.cfg.Service})
	if err != nil {
		mu.Lock()
		de := dialErr
		mu.Unlock()
		return grpcClassify(err, de)
	}
	st := resp.GetStatus()
	if st == healthpb.HealthCheckResponse_SERVING {
		return probe.Result{Status: probe.Pass, Code: int(st), Detail: "SERVING"}
	}
	return probe.Result{Status: probe.FailNow, Kind: probe.KindStatus, Code: int(st), Detail: "serving status " + st.String()}
}

// grpcClassify turns a failed call into a result; dialErr is the last
// connect error, if any, which says why the transport failed.
func grpcClassify(err, dialErr error) probe.Result {
	s, _ := status.FromError(err)
	switch s.Code() {
	case codes.DeadlineExceeded:
		return probe.Result{Status: probe.Fail, Kind: probe.KindTimeout, Detail: "grpc: " + s.Message()}
	case codes.Unavailable:
		kind := probe.KindNetwork
		if dialErr != nil {
			kind = probe.KindOf(dialErr)
		}
		if kind == probe.KindOther || kind == probe.KindNone {
			kind = probe.KindNetwork
		}
		return probe.Result{Status: probe.Fail, Kind: kind, Detail: "grpc unavailable: " + s.Message()}
	case codes.Canceled:
		return probe.Result{Status: probe.Fail, Kind: probe.KindOther, Detail: "grpc: " + s.Message()}
	}
	return probe.Result{Status: probe.FailNow, Kind: probe.KindStatus, Detail: "grpc status " + s.Code().String() + ": " + s.Message()}
}
