package probe

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDependencies: importing probe links neither gRPC nor a DNS
// library nor testify; those live in probe/grpcprobe and probe/dnsprobe.
func TestLeanDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		for _, bad := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/miekg/dns", "github.com/stretchr/testify"} {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("probe depends on %s", d)
			}
		}
	}
	t.Logf("go list -deps ./probe: %d packages", len(deps))
}
