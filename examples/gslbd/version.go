package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion describes the running binary from its build information:
// the module version (e.g. "v0.4.0" for go install ...@v0.4.0, "(devel)"
// for a build in a checkout), then the VCS revision, its time and
// "modified" when the work tree had changes, when the build recorded them.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "modified"
			}
		}
	}
	parts := []string{v}
	if rev != "" {
		parts = append(parts, "revision "+rev)
	}
	if at != "" {
		parts = append(parts, at)
	}
	if modified != "" {
		parts = append(parts, modified)
	}
	return strings.Join(parts, ", ") + ", " + bi.GoVersion
}
