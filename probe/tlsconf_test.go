package probe

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/gslbkit/gslb/internal/probetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probersNewCA is a throw-away certificate authority for TLS tests.
func probersNewCA(t testing.TB) *probetest.CA { return probetest.NewCA(t) }

func TestTLSConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  TLSConfig
		ok   bool
	}{
		{"zero value verifies with system roots", TLSConfig{}, true},
		{"cert file without key", TLSConfig{CertFile: "c.pem"}, false},
		{"key PEM without cert", TLSConfig{KeyPEM: "x"}, false},
		{"cert file and cert PEM", TLSConfig{CertFile: "c", KeyFile: "k", CertPEM: "c", KeyPEM: "k"}, false},
		{"skip verify", TLSConfig{InsecureSkipVerify: true}, true},
		{"curves by name, any case", TLSConfig{Curves: []string{"X25519", "p-256", "secp384r1", "X25519MLKEM768"}}, true},
		{"unknown curve", TLSConfig{Curves: []string{"X25519", "X448"}}, false},
		{"a curve twice under two names", TLSConfig{Curves: []string{"P-256", "X25519", "prime256v1"}}, false},
		{"TLS 1.2 at most", TLSConfig{MaxVersion: "1.2"}, true},
		{"TLS 1.3 at most", TLSConfig{MaxVersion: "1.3"}, true},
		{"unknown max version", TLSConfig{MaxVersion: "1.1"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrTLSConfig)
			}
		})
	}
}

func TestTLSConfigBuild(t *testing.T) {
	ca := probersNewCA(t)
	_, certPEM, keyPEM := ca.Issue(true, "client")
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.PEM, 0o600))
	certFile := filepath.Join(dir, "c.pem")
	keyFile := filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certFile, certPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))

	t.Run("files are read", func(t *testing.T) {
		c := &TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}
		tc, err := c.ClientConfig("example.test")
		require.NoError(t, err)
		require.NotNil(t, tc.RootCAs)
		require.Len(t, tc.Certificates, 1)
		require.Equal(t, "example.test", tc.ServerName)
	})
	t.Run("server name overrides the default", func(t *testing.T) {
		c := &TLSConfig{ServerName: "sni.test", CAPEM: string(ca.PEM)}
		tc, err := c.ClientConfig("example.test")
		require.NoError(t, err)
		require.Equal(t, "sni.test", tc.ServerName)
	})
	t.Run("the same CAs share one pool", func(t *testing.T) {
		a, err := (&TLSConfig{CAFile: caFile}).ClientConfig("a.test")
		require.NoError(t, err)
		b, err := (&TLSConfig{CAPEM: string(ca.PEM)}).ClientConfig("b.test") // other field, other key
		require.NoError(t, err)
		a2, err := (&TLSConfig{CAFile: caFile, InsecureSkipVerify: true}).ClientConfig("c.test")
		require.NoError(t, err)
		b2, err := (&TLSConfig{CAPEM: string(ca.PEM)}).ClientConfig("d.test")
		require.NoError(t, err)
		assert.Same(t, a.RootCAs, a2.RootCAs)
		assert.Same(t, b.RootCAs, b2.RootCAs)
		assert.NotSame(t, a.RootCAs, b.RootCAs)
		other := probersNewCA(t)
		c, err := (&TLSConfig{CAPEM: string(other.PEM)}).ClientConfig("e.test")
		require.NoError(t, err)
		assert.NotSame(t, b.RootCAs, c.RootCAs)
		assert.False(t, a.RootCAs.Equal(c.RootCAs))
		// A caller's pool is copied, never shared.
		d, err := (&TLSConfig{RootCAs: ca.Pool}).ClientConfig("f.test")
		require.NoError(t, err)
		assert.NotSame(t, ca.Pool, d.RootCAs)
		assert.True(t, ca.Pool.Equal(d.RootCAs))
		// A config gets a session cache of its own unless resumption is off.
		assert.NotNil(t, a.ClientSessionCache)
		assert.NotSame(t, a.ClientSessionCache, a2.ClientSessionCache)
		off, err := (&TLSConfig{DisableResumption: true}).ClientConfig("g.test")
		require.NoError(t, err)
		assert.Nil(t, off.ClientSessionCache)
	})
	t.Run("curves", func(t *testing.T) {
		tc, err := (&TLSConfig{Curves: []string{"x25519", "prime256v1", "SecP384r1"}}).ClientConfig("x")
		require.NoError(t, err)
		assert.Equal(t, []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384}, tc.CurvePreferences)
		tc, err = (&TLSConfig{}).ClientConfig("x")
		require.NoError(t, err)
		assert.Nil(t, tc.CurvePreferences, "Go's default")
		_, err = (&TLSConfig{Curves: []string{"X25519", "X448"}}).ClientConfig("x")
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "curves[1]", fe.Path)
		assert.Equal(t, `"X448"`, fe.Value)
		assert.Contains(t, fe.Allowed, "X25519MLKEM768")
	})
	t.Run("HTTPS probers with the same settings share one base config", func(t *testing.T) {
		newH := func(addr, host string, c TLSConfig) *HTTP {
			cfg := DefaultHTTPConfig()
			cfg.Hostname = host
			cfg.TLS = &c
			h, err := NewHTTP(addr, cfg)
			require.NoError(t, err)
			return h
		}
		files := TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}
		a := newH("127.0.0.1:1", "a.test", files)
		b := newH("127.0.0.1:2", "b.test", files)
		assert.Same(t, a.tls.base, b.tls.base)
		assert.NotSame(t, a.tls.sessions, b.tls.sessions, "each its own session cache")
		cfgA, cfgB := a.tls.config(), b.tls.config()
		assert.Equal(t, "a.test", cfgA.ServerName)
		assert.Equal(t, "b.test", cfgB.ServerName)
		assert.Same(t, a.tls.sessions, cfgA.ClientSessionCache)
		assert.Len(t, cfgA.Certificates, 1)
		assert.NotSame(t, cfgA, a.tls.config(), "a copy per connection")
		// Other settings, other bases.
		skip := files
		skip.InsecureSkipVerify = true
		assert.NotSame(t, a.tls.base, newH("127.0.0.1:3", "a.test", skip).tls.base)
		x := files
		x.Curves = []string{"X25519"}
		assert.NotSame(t, a.tls.base, newH("127.0.0.1:3", "a.test", x).tls.base)
		// The server name is per prober, not part of the base.
		sn := files
		sn.ServerName = "sni.test"
		c := newH("127.0.0.1:4", "c.test", sn)
		assert.Same(t, a.tls.base, c.tls.base)
		assert.Equal(t, "sni.test", c.tls.config().ServerName)
		// Resumption off: no session cache.
		off := files
		off.DisableResumption = true
		d := newH("127.0.0.1:5", "d.test", off)
		assert.Nil(t, d.tls.config().ClientSessionCache)
		// A file whose contents changed gives another base.
		_, certPEM2, keyPEM2 := ca.Issue(true, "client2")
		dir2 := t.TempDir()
		cf2, kf2 := filepath.Join(dir2, "c.pem"), filepath.Join(dir2, "k.pem")
		require.NoError(t, os.WriteFile(cf2, certPEM, 0o600))
		require.NoError(t, os.WriteFile(kf2, keyPEM, 0o600))
		e := newH("127.0.0.1:6", "e.test", TLSConfig{CAFile: caFile, CertFile: cf2, KeyFile: kf2})
		assert.Same(t, a.tls.base, e.tls.base, "same contents under other names")
		require.NoError(t, os.WriteFile(cf2, certPEM2, 0o600))
		require.NoError(t, os.WriteFile(kf2, keyPEM2, 0o600))
		f := newH("127.0.0.1:7", "f.test", TLSConfig{CAFile: caFile, CertFile: cf2, KeyFile: kf2})
		assert.NotSame(t, a.tls.base, f.tls.base)
	})
	t.Run("missing CA file", func(t *testing.T) {
		c := &TLSConfig{CAFile: filepath.Join(dir, "nope.pem")}
		_, err := c.ClientConfig("x")
		require.ErrorIs(t, err, ErrTLSConfig)
	})
	t.Run("CA PEM without certificates", func(t *testing.T) {
		c := &TLSConfig{CAPEM: "not pem"}
		_, err := c.ClientConfig("x")
		require.ErrorIs(t, err, ErrTLSConfig)
	})
	t.Run("bad key pair", func(t *testing.T) {
		c := &TLSConfig{CertPEM: string(certPEM), KeyPEM: "junk"}
		_, err := c.ClientConfig("x")
		require.ErrorIs(t, err, ErrTLSConfig)
	})
}
