package probe

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"weak"
)

// TLSConfig holds the TLS options of the HTTPS and gRPC probers. A nil
// *TLSConfig in a prober's config means plain text.
//
// Certificates and CAs can be given as files (read once, by the prober's
// constructor), as PEM text, or programmatically through the fields with no
// JSON form. The zero value verifies the server against the system roots,
// with the SNI taken from the probe's host name, and resumes TLS sessions
// (see DisableResumption).
type TLSConfig struct {
	// ServerName is the SNI sent and the name verified in the server's
	// certificate. Empty means the prober's host name (the HTTP prober's
	// Hostname, else the target's host); an IP address is verified against
	// the certificate's IP SANs and sends no SNI.
	ServerName string `json:"serverName,omitempty"`
	// CAFile names a PEM file of CA certificates that replace the system
	// roots. CAPEM holds the same as text; both may be set (their union).
	// Probers given the same CAs share one parsed pool of them.
	CAFile string `json:"caFile,omitempty"`
	CAPEM  string `json:"caPEM,omitempty"`
	// CertFile and KeyFile name the client certificate and its key (PEM),
	// sent when the server asks for one; CertPEM and KeyPEM hold them as text.
	// Set both of a pair or neither.
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	CertPEM  string `json:"certPEM,omitempty"`
	KeyPEM   string `json:"keyPEM,omitempty"`
	// InsecureSkipVerify accepts any server certificate (Route 53's HTTPS
	// checks do this). The handshake must still succeed.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// DisableResumption turns TLS session resumption off: every probe then
	// makes a full handshake. By default a prober resumes: it keeps the
	// last session ticket its target's server sent (in a cache of one
	// entry, its own: a ticket from one target is never offered to
	// another) and offers it at the next probe, as HAProxy does; servers
	// that do not allow resumption are unaffected. A resumed handshake
	// skips the server's certificate and its signature (with TLS 1.3 the
	// key exchange still happens), so the server's certificate is only
	// checked at full handshakes: when the server declines the ticket,
	// when the ticket's lifetime ends (at most 7 days, RFC 8446), or when
	// the certificate the session was verified with expires. Turn it off
	// when every probe must see the certificate the server presents now.
	// The cost is the stored session: about 0.5 KB per prober, plus the
	// server's certificates as parsed (about 3.5 KB for an ECDSA leaf),
	// which every session holding the same certificate shares.
	DisableResumption bool `json:"disableResumption,omitempty"`
	// Curves, when not empty, are the key exchanges offered, in order of
	// preference: "X25519", "P-256", "P-384", "P-521", and the hybrid
	// post-quantum "X25519MLKEM768", "SecP256r1MLKEM768",
	// "SecP384r1MLKEM1024" (names are matched without regard to case;
	// "secp256r1" and "prime256v1" are P-256). Empty means Go's default,
	// which offers X25519MLKEM768 and X25519 key shares in each handshake;
	// ["X25519"] offers one classic key share, as OpenSSL 3.0 (HAProxy)
	// does by default, and costs less CPU per handshake: making the
	// ML-KEM-768 share took about as long as the whole X25519 exchange
	// (110 µs against 120 µs on a small VM), and a server that picks the
	// hybrid adds as much again.
	Curves []string `json:"curves,omitempty"`
	// MaxVersion is the highest TLS version offered: empty or "1.3" (the
	// default) for TLS 1.3, "1.2" to keep every connection to TLS 1.2 (the
	// lowest the probers accept either way). It is a trade of forward
	// secrecy for CPU, to make only where the checks' traffic (a request
	// and a status) is not secret. A resumed TLS 1.3 handshake still makes
	// a fresh key exchange (the psk_dhe_ke mode, RFC 8446 section 4.2.9,
	// the only one crypto/tls offers): two X25519 operations on each side,
	// the larger part of a resumed check's CPU. A resumed TLS 1.2 handshake
	// (a session ticket, RFC 5077) makes none: its keys come from the
	// master secret of the session's first, full handshake, so whoever
	// learns that secret, or the server's ticket key that encrypts it in
	// the ticket, can decrypt every connection resumed from it, past and
	// future, until the session ends. Full handshakes (and every handshake
	// with DisableResumption) make a key exchange in both versions.
	MaxVersion string `json:"maxVersion,omitempty"`

	// RootCAs, when not nil, is copied at construction and the CAs above
	// are added to the copy; it replaces the system roots. Programmatic use
	// only.
	RootCAs *x509.CertPool `json:"-"`
	// Certificates are client certificates added to the one above.
	// Programmatic use only.
	Certificates []tls.Certificate `json:"-"`
}

// ErrTLSConfig is wrapped by every error about a TLSConfig.
var ErrTLSConfig = errors.New("probe: invalid tls config")

// Validate checks the shape of c without reading files: a certificate
// needs its key and a key its certificate, a file and PEM text of the
// same thing may not both be given, and Curves holds known names, each key
// exchange once.
func (c *TLSConfig) Validate() error {
	if c == nil {
		return nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		if c.CertFile == "" {
			return fieldErr(ErrTLSConfig, "keyFile", c.KeyFile, "set together with certFile")
		}
		return fieldErr(ErrTLSConfig, "certFile", c.CertFile, "set together with keyFile")
	}
	if (c.CertPEM == "") != (c.KeyPEM == "") {
		if c.CertPEM == "" {
			return fieldErr(ErrTLSConfig, "keyPEM", "(set)", "set together with certPEM")
		}
		return fieldErr(ErrTLSConfig, "certPEM", "(set)", "set together with keyPEM")
	}
	if c.CertFile != "" && c.CertPEM != "" {
		return fieldErr(ErrTLSConfig, "certPEM", "(set)", "empty when certFile is set (one client certificate)")
	}
	if _, ok := tlsMaxVersion(c.MaxVersion); !ok {
		return fieldErr(ErrTLSConfig, "maxVersion", c.MaxVersion, `"1.2" or "1.3" (empty: 1.3)`)
	}
	for i, name := range c.Curves {
		id, ok := tlsCurveByName(name)
		if !ok {
			return fieldErr(ErrTLSConfig, fmt.Sprintf("curves[%d]", i), name, tlsCurveNames)
		}
		for j := range i {
			if other, _ := tlsCurveByName(c.Curves[j]); other == id {
				return fieldErr(ErrTLSConfig, fmt.Sprintf("curves[%d]", i), name, fmt.Sprintf("each key exchange once (curves[%d] is the same)", j))
			}
		}
	}
	return nil
}

// tlsMaxVersion returns the tls.Config MaxVersion a MaxVersion names.
func tlsMaxVersion(v string) (uint16, bool) {
	switch v {
	case "", "1.3":
		return tls.VersionTLS13, true
	case "1.2":
		return tls.VersionTLS12, true
	}
	return 0, false
}

// tlsCurveNames lists the names Curves accepts, for errors.
const tlsCurveNames = "X25519, P-256, P-384, P-521, X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024"

// tlsCurveByName returns the key exchange a Curves entry names.
func tlsCurveByName(name string) (tls.CurveID, bool) {
	switch strings.ToLower(name) {
	case "x25519":
		return tls.X25519, true
	case "p-256", "p256", "secp256r1", "prime256v1":
		return tls.CurveP256, true
	case "p-384", "p384", "secp384r1":
		return tls.CurveP384, true
	case "p-521", "p521", "secp521r1":
		return tls.CurveP521, true
	case "x25519mlkem768":
		return tls.X25519MLKEM768, true
	case "secp256r1mlkem768":
		return tls.SecP256r1MLKEM768, true
	case "secp384r1mlkem1024":
		return tls.SecP384r1MLKEM1024, true
	}
	return 0, false
}

// ClientConfig validates c and returns the *tls.Config a prober dials with:
// TLS 1.2 up to c.MaxVersion, serverName as the SNI and verified name unless
// c.ServerName is set, nextProtos as the ALPN list, the CAs and client
// certificates of c, and, unless c.DisableResumption, a session cache of
// its own holding one session. It reads the files named in c, so call it
// once per target, in a prober's constructor (probe/grpcprobe does), and
// do not share the result between targets: its session cache is the
// target's. The RootCAs of the result may be shared with other configs
// built from the same CAFile content and CAPEM: do not modify it. Errors
// wrap ErrTLSConfig.
func (c *TLSConfig) ClientConfig(serverName string, nextProtos ...string) (*tls.Config, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	files, err := c.readFiles()
	if err != nil {
		return nil, err
	}
	tc, err := c.build(serverName, nextProtos, files)
	if err != nil {
		return nil, err
	}
	if !c.DisableResumption {
		tc.ClientSessionCache = new(tlsSessionCache)
	}
	return tc, nil
}

// tlsFiles holds the contents of the files a TLSConfig names.
type tlsFiles struct{ ca, cert, key []byte }

// readFiles reads the files c names.
func (c *TLSConfig) readFiles() (tlsFiles, error) {
	var f tlsFiles
	var err error
	if c.CAFile != "" {
		if f.ca, err = os.ReadFile(c.CAFile); err != nil {
			return f, fmt.Errorf("%w: caFile: %w", ErrTLSConfig, err)
		}
	}
	if c.CertFile != "" {
		if f.cert, err = os.ReadFile(c.CertFile); err == nil {
			f.key, err = os.ReadFile(c.KeyFile)
		}
		if err != nil {
			return f, fmt.Errorf("%w: certFile/keyFile: %w", ErrTLSConfig, err)
		}
	}
	return f, nil
}

// build is ClientConfig without the session cache, from the files' contents.
func (c *TLSConfig) build(serverName string, nextProtos []string, files tlsFiles) (*tls.Config, error) {
	tc := &tls.Config{
		ServerName:         serverName,
		InsecureSkipVerify: c.InsecureSkipVerify, //nolint:gosec // an explicit, documented option (Route 53 style)
		MinVersion:         tls.VersionTLS12,
		NextProtos:         nextProtos,
	}
	tc.MaxVersion, _ = tlsMaxVersion(c.MaxVersion) // Validate checked it
	if c.ServerName != "" {
		tc.ServerName = c.ServerName
	}
	for _, name := range c.Curves {
		id, _ := tlsCurveByName(name) // Validate checked the names
		tc.CurvePreferences = append(tc.CurvePreferences, id)
	}
	var pool *x509.CertPool
	switch {
	case c.RootCAs != nil:
		pool = c.RootCAs.Clone()
		if err := c.appendCAs(pool, files.ca); err != nil {
			return nil, err
		}
	case c.CAFile != "" || c.CAPEM != "":
		var err error
		if pool, err = c.sharedPool(files.ca); err != nil {
			return nil, err
		}
	}
	tc.RootCAs = pool
	switch {
	case c.CertFile != "":
		cert, err := tls.X509KeyPair(files.cert, files.key)
		if err != nil {
			return nil, fmt.Errorf("%w: certFile/keyFile: %w", ErrTLSConfig, err)
		}
		tc.Certificates = append(tc.Certificates, cert)
	case c.CertPEM != "":
		cert, err := tls.X509KeyPair([]byte(c.CertPEM), []byte(c.KeyPEM))
		if err != nil {
			return nil, fmt.Errorf("%w: certPEM/keyPEM: %w", ErrTLSConfig, err)
		}
		tc.Certificates = append(tc.Certificates, cert)
	}
	tc.Certificates = append(tc.Certificates, c.Certificates...)
	return tc, nil
}

// sharedBase validates c and returns the configuration the HTTP prober
// clones for each probe (setting the server name and its own session
// cache): ClientConfig's, without a server name or session cache, shared
// with every other prober whose TLSConfig has the same settings and whose
// files have the same contents, so that a prober keeps no tls.Config (nor a
// parsed client certificate) of its own. Configs with programmatic RootCAs
// or Certificates are not shared. The shared configs are held weakly, like
// the CA pools.
func (c *TLSConfig) sharedBase(nextProtos ...string) (*tls.Config, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	files, err := c.readFiles()
	if err != nil {
		return nil, err
	}
	if c.RootCAs != nil || len(c.Certificates) > 0 {
		return c.build("", nextProtos, files)
	}
	h := sha256.New()
	for _, part := range [][]byte{files.ca, []byte(c.CAPEM), files.cert, files.key, []byte(c.CertPEM), []byte(c.KeyPEM),
		[]byte(strings.Join(c.Curves, ",")), []byte(strings.Join(nextProtos, ",")), {boolByte(c.InsecureSkipVerify)},
		[]byte(c.MaxVersion)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var key tlsPoolKey
	h.Sum(key[:0])
	if v, ok := tlsBases.Load(key); ok {
		if tc := v.(weak.Pointer[tls.Config]).Value(); tc != nil {
			return tc, nil
		}
	}
	tc, err := c.build("", nextProtos, files)
	if err != nil {
		return nil, err
	}
	tc.ServerName = "" // set per probe, as c.ServerName or the prober's host
	wp := weak.Make(tc)
	tlsBases.Store(key, wp)
	runtime.AddCleanup(tc, func(k tlsPoolKey) { tlsBases.CompareAndDelete(k, wp) }, key)
	return tc, nil
}

// tlsBases holds sharedBase's configs: tlsPoolKey (of the settings and
// file contents) → weak.Pointer[tls.Config].
var tlsBases sync.Map

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// appendCAs adds the certificates of file (CAFile's content) and CAPEM to
// pool.
func (c *TLSConfig) appendCAs(pool *x509.CertPool, file []byte) error {
	if c.CAFile != "" && !pool.AppendCertsFromPEM(file) {
		return fmt.Errorf("%w: caFile %s: no PEM certificate found", ErrTLSConfig, c.CAFile)
	}
	if c.CAPEM != "" && !pool.AppendCertsFromPEM([]byte(c.CAPEM)) {
		return fmt.Errorf("%w: caPEM: no PEM certificate found", ErrTLSConfig)
	}
	return nil
}

// sharedPool returns the pool of the CAs in file (CAFile's content) and
// CAPEM, shared with every other config built from the same PEM text.
func (c *TLSConfig) sharedPool(file []byte) (*x509.CertPool, error) {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(file)))
	h.Write(n[:])
	h.Write(file)
	h.Write([]byte(c.CAPEM))
	var key tlsPoolKey
	h.Sum(key[:0])
	if v, ok := tlsPools.Load(key); ok {
		if pool := v.(weak.Pointer[x509.CertPool]).Value(); pool != nil {
			return pool, nil
		}
	}
	pool := x509.NewCertPool()
	if err := c.appendCAs(pool, file); err != nil {
		return nil, err
	}
	wp := weak.Make(pool)
	tlsPools.Store(key, wp)
	runtime.AddCleanup(pool, func(k tlsPoolKey) { tlsPools.CompareAndDelete(k, wp) }, key)
	return pool, nil
}

// tlsPoolKey names the CAs of a pool built from PEM: a SHA-256 of the
// CAFile content's length, that content and CAPEM.
type tlsPoolKey [sha256.Size]byte

// tlsPools holds the CA pools ClientConfig built from PEM, weakly: every
// prober configured with the same CAs (the usual case, one CA file for all
// targets) verifies against one pool, whose certificates are parsed once,
// instead of holding its own copy of each (about 3.5 KB per prober for one
// CA once a verification parsed it; a bundle of a hundred roots costs
// hundreds of KB). A pool that no config uses any more is collected and its
// entry removed. Two constructors racing on new CAs may each build a pool;
// both are correct.
var tlsPools sync.Map // tlsPoolKey → weak.Pointer[x509.CertPool]

// tlsSessionCache is the tls.ClientSessionCache of one prober: the last
// session stored, for one key (crypto/tls's key is the server name, else
// the address dialled). One entry is enough, since a prober talks to one
// target, and keeps a prober's memory bounded; a TLS 1.3 server that sends
// several tickets replaces the entry with each. crypto/tls deletes the
// entry (Put with nil) when the session can no longer be used.
type tlsSessionCache struct {
	mu  sync.Mutex
	key string
	cs  *tls.ClientSessionState
}

// Get returns the session stored for key.
func (c *tlsSessionCache) Get(key string) (*tls.ClientSessionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == nil || c.key != key {
		return nil, false
	}
	return c.cs, true
}

// Put stores cs for key, replacing any other session; a nil cs deletes
// key's session.
func (c *tlsSessionCache) Put(key string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs == nil {
		if c.key == key {
			c.key, c.cs = "", nil
		}
		return
	}
	c.key, c.cs = key, cs
}
