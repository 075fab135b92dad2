package grpcprobe

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// probersGRPCServer starts a real gRPC server on loopback; with withHealth
// it registers the standard health service, returned so tests can switch
// it. authority receives each call's :authority.
func probersGRPCServer(t *testing.T, withHealth bool, tlsConf *tls.Config) (string, *health.Server, chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	authority := make(chan string, 16)
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if md, ok := metadata.FromIncomingContext(ctx); ok && len(md[":authority"]) > 0 {
			select {
			case authority <- md[":authority"][0]:
			default:
			}
		}
		return h(ctx, req)
	})}
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	srv := grpc.NewServer(opts...)
	var hs *health.Server
	if withHealth {
		hs = health.NewServer()
		healthpb.RegisterHealthServer(srv, hs)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return ln.Addr().String(), hs, authority
}

func TestGRPCEnvoyRules(t *testing.T) {
	addr, hs, _ := probersGRPCServer(t, true, nil)
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	cases := []struct {
		name    string
		service string
		want    probe.Status
		kind    probe.Kind
		code    int
	}{
		{"SERVING passes", "up", probe.Pass, probe.KindNone, int(healthpb.HealthCheckResponse_SERVING)},
		{"server as a whole (empty service) is SERVING by default", "", probe.Pass, probe.KindNone, int(healthpb.HealthCheckResponse_SERVING)},
		{"Envoy rule 5: NOT_SERVING fails at once", "down", probe.FailNow, probe.KindStatus, int(healthpb.HealthCheckResponse_NOT_SERVING)},
		{"Envoy rule 5: grpc-status not OK (unknown service) fails at once", "nope", probe.FailNow, probe.KindStatus, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(addr, Config{Service: tc.service})
			require.NoError(t, err)
			r := g.Probe(probersCtx(t, 10*time.Second))
			assert.Equal(t, tc.want, r.Status, r.Detail)
			assert.Equal(t, tc.kind, r.Kind, r.Detail)
			assert.Equal(t, tc.code, r.Code)
		})
	}
	t.Run("switching the serving status", func(t *testing.T) {
		g, err := New(addr, Config{Service: "flip"})
		require.NoError(t, err)
		hs.SetServingStatus("flip", healthpb.HealthCheckResponse_SERVING)
		require.Equal(t, probe.Pass, g.Probe(probersCtx(t, 10*time.Second)).Status)
		hs.SetServingStatus("flip", healthpb.HealthCheckResponse_NOT_SERVING)
		require.Equal(t, probe.FailNow, g.Probe(probersCtx(t, 10*time.Second)).Status)
		hs.SetServingStatus("flip", healthpb.HealthCheckResponse_SERVING)
		require.Equal(t, probe.Pass, g.Probe(probersCtx(t, 10*time.Second)).Status)
	})
}

func TestGRPCFailures(t *testing.T) {
	t.Run("Envoy rule 5: UNIMPLEMENTED (no health service) fails at once", func(t *testing.T) {
		addr, _, _ := probersGRPCServer(t, false, nil)
		g, err := New(addr, DefaultConfig())
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 10*time.Second))
		assert.Equal(t, probe.FailNow, r.Status, r.Detail)
		assert.Equal(t, probe.KindStatus, r.Kind)
	})
	t.Run("Envoy rule 6: connection refused counts toward the threshold", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		g, err := New(addr, DefaultConfig())
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 10*time.Second))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Equal(t, probe.KindRefused, r.Kind, r.Detail)
	})
	t.Run("Envoy rule 6: a server that never answers times out", func(t *testing.T) {
		addr := probersTCPServer(t, func(_ net.Conn, done <-chan struct{}) { <-done })
		g, err := New(addr, DefaultConfig())
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 300*time.Millisecond))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Equal(t, probe.KindTimeout, r.Kind, r.Detail)
	})
}

func TestGRPCAuthorityAndTLS(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "grpc.test")
	addr, hs, authority := probersGRPCServer(t, true, &tls.Config{Certificates: []tls.Certificate{cert}})
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	t.Run("TLS with the test CA and authority as SNI", func(t *testing.T) {
		g, err := New(addr, Config{Authority: "grpc.test", TLS: &probe.TLSConfig{CAPEM: string(ca.PEM)}})
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 10*time.Second))
		require.Equal(t, probe.Pass, r.Status, r.Detail)
		assert.Equal(t, "grpc.test", <-authority)
	})
	t.Run("untrusted certificate fails the handshake", func(t *testing.T) {
		g, err := New(addr, Config{Authority: "grpc.test", TLS: &probe.TLSConfig{}})
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 10*time.Second))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Equal(t, probe.KindTLS, r.Kind, r.Detail)
	})
	t.Run("the second probe resumes the TLS session, unless disableResumption", func(t *testing.T) {
		resumed := make(chan bool, 8)
		addr, hs, _ := probersGRPCServer(t, true, &tls.Config{Certificates: []tls.Certificate{cert},
			VerifyConnection: func(cs tls.ConnectionState) error { resumed <- cs.DidResume; return nil }})
		hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
		for _, disable := range []bool{false, true} {
			g, err := New(addr, Config{Authority: "grpc.test", TLS: &probe.TLSConfig{CAPEM: string(ca.PEM), DisableResumption: disable}})
			require.NoError(t, err)
			var got []bool
			for range 2 {
				r := g.Probe(probersCtx(t, 10*time.Second))
				require.Equal(t, probe.Pass, r.Status, r.Detail)
				got = append(got, <-resumed)
			}
			assert.Equal(t, []bool{false, !disable}, got, "disableResumption %v", disable)
		}
	})
	t.Run("plain text against a TLS server fails", func(t *testing.T) {
		g, err := New(addr, DefaultConfig())
		require.NoError(t, err)
		r := g.Probe(probersCtx(t, 2*time.Second))
		assert.NotEqual(t, probe.Pass, r.Status, r.Detail)
	})
}

func TestGRPCConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	require.ErrorIs(t, Config{Port: -1}.Validate(), ErrInvalidConfig)
	require.ErrorIs(t, Config{Port: -1}.Validate(), ErrConfig, "the deprecated name matches too")
	require.ErrorIs(t, Config{Authority: "a b"}.Validate(), ErrInvalidConfig)
	require.ErrorIs(t, Config{TLS: &probe.TLSConfig{KeyFile: "k"}}.Validate(), ErrInvalidConfig)
	_, err := New("127.0.0.1", DefaultConfig())
	require.Error(t, err, "a port is required")
}
