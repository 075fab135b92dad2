package memory

import (
	"testing"

	"github.com/gslbkit/gslb/provider/internal/answer"
)

// TestDefaultMaxUDPSize: the Engine's default (a zero Config.MaxUDPSize)
// is the one this package documents.
func TestDefaultMaxUDPSize(t *testing.T) {
	if DefaultMaxUDPSize != answer.DefaultMaxUDPSize {
		t.Fatalf("DefaultMaxUDPSize %d, the Engine's %d", DefaultMaxUDPSize, answer.DefaultMaxUDPSize)
	}
}
