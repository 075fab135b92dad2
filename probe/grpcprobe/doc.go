// Package grpcprobe is the gRPC health prober: it implements probe.Prober
// with the standard health-checking protocol (grpc.health.v1.Health/Check)
// through google.golang.org/grpc, classifying replies as Envoy does
// (SERVING passes; any other serving status, or an RPC status other than
// Unavailable and DeadlineExceeded, fails at once; transport failures count
// toward the threshold).
//
// It lives apart from package probe so that a program probing only HTTP
// and TCP does not link gRPC. Build a prober with New from a Config (start
// from DefaultConfig; the zero Config checks the server's overall health
// over plain text) and hand it to a probe.Monitor like any other. Invalid
// values are *probe.FieldErrors wrapping ErrInvalidConfig. See the New
// example.
package grpcprobe
