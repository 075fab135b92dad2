package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestServiceUnitIsHardenedAndVerifies checks gslbd.service: it keeps the
// hardening the README promises (an unprivileged dynamic user, only
// CAP_NET_BIND_SERVICE, a read-only system, a state directory) and passes
// systemd-analyze verify with no warning, its ExecStart pointed at an
// existing binary (this test's own, so nothing is built). Where
// systemd-analyze is missing the verify step is skipped.
func TestServiceUnitIsHardenedAndVerifies(t *testing.T) {
	unit, err := os.ReadFile("gslbd.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nExecStart=/usr/local/bin/gslbd -config /etc/gslbd/gslbd.yaml\n",
		"\nDynamicUser=yes\n", "\nStateDirectory=gslbd\n",
		"\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n", "\nCapabilityBoundingSet=CAP_NET_BIND_SERVICE\n",
		"\nNoNewPrivileges=yes\n", "\nProtectSystem=strict\n", "\nProtectHome=yes\n", "\nPrivateTmp=yes\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("gslbd.service lacks %q", strings.TrimSpace(want))
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze: the unit's syntax is not verified here")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gslbd.service")
	if err := os.WriteFile(path, []byte(strings.Replace(string(unit), "ExecStart=/usr/local/bin/gslbd ", "ExecStart="+self+" ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The exposure score (0 best, 10 worst) is reported; a unit that lost
	// its hardening scores above 3.
	sec, err := exec.Command(analyze, "security", "--offline=yes", path).CombinedOutput()
	if err != nil {
		t.Logf("systemd-analyze security --offline: %v (old systemd?)", err)
		return
	}
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(sec)
	if m == nil {
		t.Logf("no exposure level in:\n%s", sec)
		return
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("systemd-analyze security: exposure %.1f", score)
	if score > 3 {
		t.Errorf("exposure %.1f: the unit lost its hardening\n%s", score, sec)
	}
}

// TestVersionFromBuildInfo: -version prints the module version and the
// VCS revision from the build information.
func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/gslbkit/gslb", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T20:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := formatVersion(bi), "v0.4.0, revision 0123abcd, 2026-12-01T20:00:00Z, modified, go1.26.0"; got != want {
		t.Errorf("formatVersion = %q, want %q", got, want)
	}
	if got := formatVersion(&debug.BuildInfo{GoVersion: "go1.26.0"}); got != "(devel), go1.26.0" {
		t.Errorf("no version: %q", got)
	}
	var out strings.Builder
	if err := run(t.Context(), []string{"-version"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "gslbd ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("-version printed %q", out.String())
	}
}
