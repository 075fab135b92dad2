//go:build linux && (amd64 || arm64)

package memory_test

import (
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
)

func init() { usePortableUDP = func(t *testing.T) { memory.UsePortableUDP(t) } }
