//go:build linux && (amd64 || arm64)

package dnsserver_test

import (
	"testing"

	"github.com/gslbkit/gslb/provider/dnsserver"
)

func init() { usePortableUDP = func(t *testing.T) { dnsserver.UsePortableUDP(t) } }
