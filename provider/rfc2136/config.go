package rfc2136

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/envfill"
	"github.com/gslbkit/gslb/internal/fielderr"
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
	// KeyAlg is the TSIG algorithm, one of Algorithms. Default ("")
	// "hmac-sha256".
	KeyAlg string `json:"keyAlg"`
	// Secret is the TSIG key's secret, base64 as tsig-keygen prints it.
	Secret string `json:"secret"`
	// Timeout bounds each exchange with the server (an update or a whole
	// zone transfer) when the context has no earlier deadline, in
	// [100ms, 5m]. Default (0) 10s.
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
	fill := envfill.From(getenv)
	fill(&c.Server, EnvServer)
	fill(&c.KeyName, EnvKeyName)
	fill(&c.KeyAlg, EnvKeyAlg)
	fill(&c.Secret, EnvSecret)
	return c
}

// ErrInvalidConfig is wrapped by every Config validation error (a
// *FieldError).
var ErrInvalidConfig = errors.New("rfc2136: invalid config")

// FieldError is the module's one invalid-configuration error: the field's
// path, its value as written (the secret never) and what is allowed. Its
// message reads
//
//	rfc2136: invalid config: timeout = 10m: allowed [100ms, 5m], or 0 for the default (10s)
type FieldError = fielderr.Error

// withDefaults fills the zero fields that take a default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.KeyAlg == "" {
		c.KeyAlg = d.KeyAlg
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	return c
}

// Validate reports the first field that is missing or out of range, as a
// *FieldError wrapping ErrInvalidConfig; zero fields that take a default
// take it first. The secret's value never appears in an error.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Server == "" {
		return fielderr.Missing(ErrInvalidConfig, "server", `"host:port" (or set `+EnvServer+`)`)
	}
	if _, err := serverAddr(c.Server); err != nil {
		return err
	}
	if err := fielderr.Together(ErrInvalidConfig, "keyName", c.KeyName != "", "secret", c.Secret != "", "for unsigned updates"); err != nil {
		return err
	}
	if c.KeyName != "" {
		if dnsname.Check(c.KeyName) != nil {
			return fielderr.New(ErrInvalidConfig, "keyName", c.KeyName, dnsname.NameRule)
		}
		if _, err := base64.StdEncoding.DecodeString(c.Secret); err != nil {
			return &FieldError{Path: "secret", Value: fmt.Sprintf("(%d characters)", len(c.Secret)), Allowed: "base64, as tsig-keygen prints it", Err: ErrInvalidConfig}
		}
		ok := false
		for _, a := range Algorithms {
			ok = ok || strings.EqualFold(strings.TrimSuffix(c.KeyAlg, "."), a)
		}
		if !ok {
			return fielderr.New(ErrInvalidConfig, "keyAlg", c.KeyAlg, fielderr.OneOf(Algorithms...))
		}
	}
	if t := c.Timeout; t < 100*time.Millisecond || t > 5*time.Minute {
		return fielderr.New(ErrInvalidConfig, "timeout", c.Timeout, fielderr.OrDefault(fielderr.DurationRange(100*time.Millisecond, 5*time.Minute), DefaultConfig().Timeout))
	}
	return nil
}

// serverAddr returns s as host:port, adding port 53 when missing.
func serverAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), "53"
		if strings.ContainsAny(host, " /") || host == "" {
			return "", fielderr.New(ErrInvalidConfig, "server", s, `"host:port" or "host" (port 53)`)
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fielderr.New(ErrInvalidConfig, "server", s, `"host:port" with a port in [1, 65535]`)
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
