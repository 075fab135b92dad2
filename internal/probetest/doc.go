// Package probetest holds the fixtures the probers' tests share (package
// probe and its subpackages grpcprobe and dnsprobe): a throw-away
// certificate authority issuing ECDSA P-256 leaf certificates, and a TCP
// server on 127.0.0.1 that hands each connection to a function. Tests only.
package probetest
