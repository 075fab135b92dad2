package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// GRPCConfig configures a gRPC health prober (grpc.health.v1.Health/Check).
// JSON names follow Envoy Gateway's gRPC health checker (service) and
// overrides.port. The zero value checks the server's overall health over
// plain text.
type GRPCConfig struct {
	// Service is the service name sent in the request; empty asks about
	// the server as a whole.
	Service string `json:"service,omitempty"`
	// Authority is the :authority header (and the default TLS server
	// name); empty means the target's host:port.
	Authority string `json:"authority,omitempty"`
	// TLS, when not nil, makes the prober use TLS with these options.
	TLS *TLSConfig `json:"tls,omitempty"`
	// Port, when not 0, replaces the target's port; 1–65535.
	Port int `json:"port,omitempty"`
}

// DefaultGRPCConfig returns a check of the server's overall health.
func DefaultGRPCConfig() GRPCConfig { return GRPCConfig{} }

// ErrGRPCConfig is wrapped by every GRPCConfig validation error.
var ErrGRPCConfig = errors.New("probe: grpc config")

// Validate checks the fields; errors name the field, value and range.
func (c GRPCConfig) Validate() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("%w: port %d: want 1–65535, or 0 for the target's port", ErrGRPCConfig, c.Port)
	}
	for i := 0; i < len(c.Authority); i++ {
		if b := c.Authority[i]; b <= ' ' || b >= 0x7f || b == '/' {
			return fmt.Errorf("%w: authority %q: character %q at %d, want host or host:port", ErrGRPCConfig, c.Authority, b, i)
		}
	}
	if err := c.TLS.Validate(); err != nil {
		return fmt.Errorf("%w: tls: %w", ErrGRPCConfig, err)
	}
	return nil
}

// GRPC probes a server with the standard gRPC health-checking protocol,
// through google.golang.org/grpc's generated health client. Each probe
// opens its own connection and closes it before returning (simple and
// leak-free; a shared connection would hide reconnect failures behind
// grpc-go's back-off). Classification follows Envoy's rule 5:
//
//   - SERVING → Pass (Code 1);
//   - any other reply — NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN — → FailNow
//     (KindStatus, Code the serving status);
//   - an RPC that ends with a status other than OK — Unimplemented (no
//     health service), NotFound (unknown service), Internal (a malformed
//     reply), … — → FailNow (KindStatus), except:
//   - Unavailable, which grpc-go also uses for connection failures and
//     resets, and DeadlineExceeded → Fail (it counts toward the threshold).
//
// Probe is safe for concurrent use.
type GRPC struct {
	cfg    GRPCConfig
	addr   string
	tls    *tls.Config // nil = plain text
	dialer net.Dialer
}

var _ Prober = (*GRPC)(nil)

// NewGRPC returns a gRPC health prober for addr ("host:port", "[v6]:port";
// a port is required unless cfg.Port is set). cfg is validated and copied;
// files named in cfg.TLS are read now.
func NewGRPC(addr string, cfg GRPCConfig) (*GRPC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := probeSplitAddr(addr, "", cfg.Port)
	if err != nil {
		return nil, err
	}
	g := &GRPC{cfg: cfg, addr: net.JoinHostPort(host, port)}
	if cfg.TLS != nil {
		t := *cfg.TLS
		g.cfg.TLS = &t
		sni := host
		if cfg.Authority != "" {
			sni = cfg.Authority
			if h, _, err := net.SplitHostPort(sni); err == nil {
				sni = h
			}
		}
		if g.tls, err = cfg.TLS.build(sni, []string{"h2"}); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Addr returns the host:port the prober connects to.
func (g *GRPC) Addr() string { return g.addr }

// Probe performs one Health/Check call. ctx's deadline is the probe's timeout.
func (g *GRPC) Probe(ctx context.Context) Result {
	start := time.Now()
	r := g.probe(ctx)
	if r.Status != Pass && ctx.Err() == context.Canceled {
		r.Status, r.Kind, r.Detail = Fail, KindOther, "canceled"
	}
	r.Latency = time.Since(start)
	return r
}

func (g *GRPC) probe(ctx context.Context) Result {
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
				err = fmt.Errorf("%w: server did not negotiate h2", ErrTLSConfig)
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
		return Result{Status: Fail, Kind: KindOther, Detail: "grpc client: " + err.Error()}
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
		return Result{Status: Pass, Code: int(st), Detail: "SERVING"}
	}
	return Result{Status: FailNow, Kind: KindStatus, Code: int(st), Detail: "serving status " + st.String()}
}

// grpcClassify turns a failed call into a result; dialErr is the last
// connect error, if any, which says why the transport failed.
func grpcClassify(err, dialErr error) Result {
	s, _ := status.FromError(err)
	switch s.Code() {
	case codes.DeadlineExceeded:
		return Result{Status: Fail, Kind: KindTimeout, Detail: "grpc: " + s.Message()}
	case codes.Unavailable:
		kind := KindNetwork
		if dialErr != nil {
			kind = probeErrKind(dialErr)
		}
		if kind == KindOther || kind == KindNone {
			kind = KindNetwork
		}
		return Result{Status: Fail, Kind: kind, Detail: "grpc unavailable: " + s.Message()}
	case codes.Canceled:
		return Result{Status: Fail, Kind: KindOther, Detail: "grpc: " + s.Message()}
	}
	return Result{Status: FailNow, Kind: KindStatus, Detail: "grpc status " + s.Code().String() + ": " + s.Message()}
}
