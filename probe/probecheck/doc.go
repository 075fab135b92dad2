// Package probecheck wires a complete health check — prober type, prober
// config and Policy — from one config block, for programs that read checks
// from files: Spec names the prober (HTTP, TCP or gRPC) and holds its
// config and Policy, Spec.NewProber builds the prober, and
// DecodeEnvoyGatewayActive reads an Envoy Gateway healthCheck.active block.
//
// It imports probe/grpcprobe and so gRPC; a program that builds its
// probers itself (probe.NewHTTP, probe.NewTCP) need not import it, and
// package probe never does. Configs follow probe's rule: start from the
// defaults, a zero field takes its default, invalid values are
// *probe.FieldErrors. See the DecodeEnvoyGatewayActive example.
package probecheck
