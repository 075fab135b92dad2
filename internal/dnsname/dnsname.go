package dnsname

import (
	"errors"
	"fmt"
	"strings"
)

// MaxName is the longest presentation-format name without its trailing dot.
const MaxName = 253

// MaxLabel is the longest label.
const MaxLabel = 63

// ErrInvalid is wrapped by every error this package returns.
var ErrInvalid = errors.New("dnsname: invalid name")

// Fqdn returns name in lower case with exactly one trailing dot. The root is ".".
func Fqdn(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.TrimRight(name, ".")
	return name + "."
}

// Trim returns name in lower case without its trailing dot.
func Trim(name string) string {
	return strings.TrimSuffix(Fqdn(name), ".")
}

// Equal reports whether a and b name the same node, ignoring case and a
// trailing dot.
func Equal(a, b string) bool { return Fqdn(a) == Fqdn(b) }

// Join returns the fully qualified name of label under zone, e.g.
// Join("www", "example.com") = "www.example.com.". "@" and "" denote the apex.
func Join(label, zone string) string {
	label = strings.TrimSpace(label)
	if label == "@" || label == "" {
		return Fqdn(zone)
	}
	if strings.HasSuffix(label, ".") {
		return Fqdn(label)
	}
	z := Fqdn(zone)
	if z == "." {
		return Fqdn(label)
	}
	return Fqdn(label + "." + z)
}

// Relative returns name relative to zone ("@" for the apex). When name is
// not inside zone it returns the fully qualified name and false.
func Relative(name, zone string) (string, bool) {
	n, z := Fqdn(name), Fqdn(zone)
	if n == z {
		return "@", true
	}
	if z == "." {
		return strings.TrimSuffix(n, "."), true
	}
	if strings.HasSuffix(n, "."+z) {
		return strings.TrimSuffix(n, "."+z), true
	}
	return n, false
}

// InZone reports whether name is zone or below it.
func InZone(name, zone string) bool {
	_, ok := Relative(name, zone)
	return ok
}

// CheckLabel reports whether s is a valid hostname label (RFC 1123: letters,
// digits and hyphens, 1–63 bytes, not starting or ending with a hyphen).
// Underscores are allowed when underscore is true (service labels such as
// "_gslb-owner").
func CheckLabel(s string, underscore bool) error {
	if len(s) == 0 || len(s) > MaxLabel {
		return fmt.Errorf("%w: label %q has %d bytes, allowed 1–%d", ErrInvalid, s, len(s), MaxLabel)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(s)-1 {
				return fmt.Errorf("%w: label %q starts or ends with a hyphen", ErrInvalid, s)
			}
		case c == '_' && underscore:
		default:
			return fmt.Errorf("%w: label %q has character %q, allowed letters, digits and hyphens", ErrInvalid, s, c)
		}
	}
	return nil
}

// Check reports whether name is a valid host name: every label valid (an
// underscore allowed), at most 253 characters without the trailing dot.
func Check(name string) error {
	n := strings.TrimSuffix(strings.TrimSpace(name), ".")
	if n == "" {
		return fmt.Errorf("%w: empty name", ErrInvalid)
	}
	if len(n) > MaxName {
		return fmt.Errorf("%w: %q has %d characters, allowed at most %d", ErrInvalid, name, len(n), MaxName)
	}
	for _, l := range strings.Split(n, ".") {
		if l == "*" {
			continue
		}
		if err := CheckLabel(l, true); err != nil {
			return fmt.Errorf("name %q: %w", name, err)
		}
	}
	return nil
}

// Rule texts for configuration errors: what Check and CheckLabel accept,
// written for the "allowed" part of an invalid-config error, so callers
// do not show this package's own errors to users.
const (
	// NameRule is what Check accepts.
	NameRule = "a DNS name: dot-separated labels of [1, 63] letters, digits, hyphens or underscores (no hyphen first or last), at most 253 bytes"
	// LabelRule is what CheckLabel(s, false) accepts.
	LabelRule = "a DNS label: [1, 63] letters, digits or hyphens (no hyphen first or last)"
	// ServiceLabelRule is what CheckLabel(s, true) accepts.
	ServiceLabelRule = "a DNS label: [1, 63] letters, digits, hyphens or underscores (no hyphen first or last)"
)
