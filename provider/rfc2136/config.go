package rfc2136

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
	librfc2136 "github.com/libdns/rfc2136"
)

// The environment variables FromEnv reads.
const (
	EnvServer  = "GSLB_RFC2136_SERVER"
	EnvKeyName = "GSLB_RFC2136_KEY_NAME"
	EnvKeyAlg  = "GSLB_RFC2136_KEY_ALG"
	EnvSecret  = "GSLB_RFC2136_SECRET"
)

// Algorithms lists the TSIG algorithms KeyAlg accepts.
var Algorithms = []string{"hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"}

// Config describes a primary server that accepts RFC 2136 dynamic updates
// and zone transfers (BIND, Knot, PowerDNS), usually authenticated with a
// TSIG key. Credentials can come from the environment (FromEnv).
type Config struct {
	// Server is the primary's address, "host:port"; a missing port means
	// 53. Required.
	Server string `json:"server"`
	// KeyName is the TSIG key's name (e.g. "gslb-key"). Empty together
	// with Secret means unsigned requests (servers that allow updates by
	// address).
	KeyName string `json:"keyName"`
	// KeyAlg is the TSIG algorithm, one of Algorithms. Default
	// "hmac-sha256".
	KeyAlg string `json:"keyAlg"`
	// Secret is the TSIG key's secret, base64 as tsig-keygen prints it.
	Secret string `json:"secret"`
	// Timeout bounds each exchange with the server (an update or a whole
	// zone transfer) when the context has no earlier deadline, in
	// [100ms, 5m]. Default 10s.
	Timeout time.Duration `json:"timeout"`
}

// DefaultConfig returns hmac-sha256 and a 10 s timeout; Server and the key
// are left for the caller (or FromEnv) to fill.
func DefaultConfig() Config {
	return Config{KeyAlg: "hmac-sha256", Timeout: 10 * time.Second}
}

// FromEnv returns a copy of c with empty Server, KeyName, KeyAlg and
// Secret taken from GSLB_RFC2136_SERVER, GSLB_RFC2136_KEY_NAME,
// GSLB_RFC2136_KEY_ALG and GSLB_RFC2136_SECRET. getenv nil means
// os.Getenv. Fields already set win.
func (c Config) FromEnv(getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	fill := func(dst *string, key string) {
		if *dst == "" {
			*dst = strings.TrimSpace(getenv(key))
		}
	}
	fill(&c.Server, EnvServer)
	fill(&c.KeyName, EnvKeyName)
	fill(&c.KeyAlg, EnvKeyAlg)
	fill(&c.Secret, EnvSecret)
	return c
}

// Validate reports the first field that is missing or out of range. The
// secret's value never appears in an error.
func (c Config) Validate() error {
	if c.Server == "" {
		return fmt.Errorf("rfc2136: server is empty: want \"host:port\" (or set %s)", EnvServer)
	}
	if _, err := serverAddr(c.Server); err != nil {
		return err
	}
	if (c.KeyName == "") != (c.Secret == "") {
		return fmt.Errorf("rfc2136: keyName %q and secret must be set together (or both empty for unsigned updates)", c.KeyName)
	}
	if c.KeyName != "" {
		if err := dnsname.Check(c.KeyName); err != nil {
			return fmt.Errorf("rfc2136: keyName %q: %w", c.KeyName, err)
		}
		if _, err := base64.StdEncoding.DecodeString(c.Secret); err != nil {
			return fmt.Errorf("rfc2136: secret (%d characters) is not valid base64: %v", len(c.Secret), err)
		}
		ok := false
		for _, a := range Algorithms {
			ok = ok || strings.EqualFold(strings.TrimSuffix(c.KeyAlg, "."), a)
		}
		if !ok {
			return fmt.Errorf("rfc2136: keyAlg %q: must be one of %s", c.KeyAlg, strings.Join(Algorithms, ", "))
		}
	}
	if t := c.Timeout; t < 100*time.Millisecond || t > 5*time.Minute {
		return fmt.Errorf("rfc2136: timeout %v: must be in [100ms, 5m]", c.Timeout)
	}
	return nil
}

// serverAddr returns s as host:port, adding port 53 when missing.
func serverAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), "53"
		if strings.ContainsAny(host, " /") || host == "" {
			return "", fmt.Errorf("rfc2136: server %q: want \"host:port\"", s)
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("rfc2136: server %q: port must be in [1, 65535]", s)
	}
	return net.JoinHostPort(host, port), nil
}

// Libdns returns the equivalent github.com/libdns/rfc2136 provider, for
// callers who want the upstream module itself. It classifies no errors and
// returns TXT text with the wire's escapes; Provider does not.
func (c Config) Libdns() *librfc2136.Provider {
	addr, err := serverAddr(c.Server)
	if err != nil {
		addr = c.Server
	}
	return &librfc2136.Provider{KeyName: c.KeyName, KeyAlg: c.KeyAlg, Key: c.Secret, Server: addr}
}

// MarshalJSON writes Config with its durations as strings such as "10s".
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads Config, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	return jsontime.Unmarshal(b, (*plain)(c))
}
