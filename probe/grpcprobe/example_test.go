package grpcprobe_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gslbkit/gslb/probe/grpcprobe"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A gRPC server on loopback with the standard health service: the prober
// passes while the service is SERVING and fails at once when it is not.
func ExampleNew() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	cfg := grpcprobe.DefaultConfig()
	cfg.Service = "orders"
	p, err := grpcprobe.New(ln.Addr().String(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs.SetServingStatus("orders", healthpb.HealthCheckResponse_SERVING)
	r := p.Probe(ctx)
	fmt.Println(r.Status, r.Detail)
	hs.SetServingStatus("orders", healthpb.HealthCheckResponse_NOT_SERVING)
	r = p.Probe(ctx)
	fmt.Println(r.Status, r.Detail)

	_, err = grpcprobe.New("127.0.0.1:1", grpcprobe.Config{Port: 70000})
	fmt.Println(err)
	// Output:
	// pass SERVING
	// fail-now serving status NOT_SERVING
	// grpcprobe: invalid config: port = 70000: allowed [1, 65535], or 0 for the target's port
}
