package dnssec

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/miekg/dns"
)

// Algorithms the package signs with (RFC 8624 lists both as MUST for
// validators).
const (
	// ECDSAP256SHA256 is algorithm 13 (RFC 6605), the default.
	ECDSAP256SHA256 = dns.ECDSAP256SHA256
	// ED25519 is algorithm 15 (RFC 8080).
	ED25519 = dns.ED25519
)

// DNSKEY flags (RFC 4034 section 2.1.1).
const (
	// FlagsZSK marks a zone-signing key: the Zone Key bit alone (256).
	FlagsZSK uint16 = dns.ZONE
	// FlagsKSK marks a key-signing key or a combined signing key: Zone Key
	// and Secure Entry Point bits (257).
	FlagsKSK uint16 = dns.ZONE | dns.SEP
)

// Key is one DNSSEC key pair: the public DNSKEY record and its private key.
// Its String, GoString and Format methods print only the public part (zone,
// algorithm, key tag, flags), so a Key passed to a logger or fmt never
// reveals the private key. A Key is immutable and safe for concurrent use.
type Key struct {
	dnskey *dns.DNSKEY
	priv   crypto.Signer
	tag    uint16
}

// DNSKEY returns a copy of the key's DNSKEY record.
func (k *Key) DNSKEY() *dns.DNSKEY { return dns.Copy(k.dnskey).(*dns.DNSKEY) }

// Tag returns the key tag (RFC 4034 appendix B).
func (k *Key) Tag() uint16 { return k.tag }

// Algorithm returns the DNSSEC algorithm number (13 or 15).
func (k *Key) Algorithm() uint8 { return k.dnskey.Algorithm }

// Zone returns the zone the key belongs to (the DNSKEY's owner, fully
// qualified, lower case).
func (k *Key) Zone() string { return k.dnskey.Hdr.Name }

// SEP reports whether the Secure Entry Point flag is set (a KSK or CSK).
func (k *Key) SEP() bool { return k.dnskey.Flags&dns.SEP != 0 }

// String describes the key without its private part, as
// "example.com. ECDSAP256SHA256 tag 12345 flags 257".
func (k *Key) String() string {
	if k == nil || k.dnskey == nil {
		return "<nil dnssec.Key>"
	}
	return fmt.Sprintf("%s %s tag %d flags %d", k.dnskey.Hdr.Name, dns.AlgorithmToString[k.dnskey.Algorithm], k.tag, k.dnskey.Flags)
}

// GoString is String: %#v must not print the private key either.
func (k *Key) GoString() string { return "dnssec.Key{" + k.String() + "}" }

// Format prints String for every verb, so no formatting reaches the private
// key.
func (k *Key) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, k.GoString())
		return
	}
	_, _ = io.WriteString(f, k.String())
}

// ErrKey is wrapped by every error about a key: a file that does not parse,
// an unsupported algorithm, a private key that does not match the public
// one.
var ErrKey = errors.New("dnssec: invalid key")

// NewKey makes a Key of zone from a private key (an *ecdsa.PrivateKey on
// P-256 or an ed25519.PrivateKey) with the given DNSKEY flags (FlagsZSK or
// FlagsKSK) and TTL in seconds.
func NewKey(zone string, flags uint16, ttl uint32, priv crypto.Signer) (*Key, error) {
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: dns.CanonicalName(dns.Fqdn(zone)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: ttl},
		Flags: flags, Protocol: 3}
	if _, ok := dns.IsDomainName(k.Hdr.Name); !ok {
		return nil, fmt.Errorf("%w: zone %q is not a domain name", ErrKey, zone)
	}
	if flags != FlagsZSK && flags != FlagsKSK {
		return nil, fmt.Errorf("%w: flags %d: allowed 256 (ZSK) or 257 (KSK, CSK)", ErrKey, flags)
	}
	switch p := priv.(type) {
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: ECDSA key not on P-256", ErrKey)
		}
		k.Algorithm = ECDSAP256SHA256
		// The public key derived from the private scalar (not the one the
		// struct carries, which a parser may have taken from the DNSKEY).
		e, err := p.ECDH()
		if err != nil {
			return nil, fmt.Errorf("%w: ECDSA private key: %w", ErrKey, err)
		}
		b := e.PublicKey().Bytes() // 0x04 || X || Y
		if len(b) != 65 {
			return nil, fmt.Errorf("%w: ECDSA public key", ErrKey)
		}
		k.PublicKey = toBase64(b[1:])
	case ed25519.PrivateKey:
		if len(p) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("%w: Ed25519 key of %d bytes", ErrKey, len(p))
		}
		k.Algorithm = ED25519
		k.PublicKey = toBase64(p.Public().(ed25519.PublicKey))
	default:
		return nil, fmt.Errorf("%w: key type %T: allowed ECDSA P-256 or Ed25519", ErrKey, priv)
	}
	return &Key{dnskey: k, priv: priv, tag: k.KeyTag()}, nil
}

// GenerateKey makes a new key for zone: algorithm ECDSAP256SHA256 or
// ED25519, flags FlagsZSK or FlagsKSK, DNSKEY TTL in seconds.
func GenerateKey(zone string, alg uint8, flags uint16, ttl uint32) (*Key, error) {
	var priv crypto.Signer
	switch alg {
	case ECDSAP256SHA256:
		p, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("dnssec: generating a key: %w", err)
		}
		priv = p
	case ED25519:
		_, p, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("dnssec: generating a key: %w", err)
		}
		priv = p
	default:
		return nil, fmt.Errorf("%w: algorithm %d: allowed 13 (ECDSAP256SHA256) or 15 (ED25519)", ErrKey, alg)
	}
	return NewKey(zone, flags, ttl, priv)
}

// maxKeyFile bounds the size of a key file read.
const maxKeyFile = 64 << 10

// ParseKey reads a key in BIND's format: pub is the K<zone>+<alg>+<tag>.key
// file (one DNSKEY record in zone-file syntax, comments allowed), priv the
// matching .private file ("Private-key-format: v1.3"). Only algorithms 13
// and 15 are accepted; the private key must match the public one.
func ParseKey(pub, priv []byte) (*Key, error) {
	if len(pub) > maxKeyFile || len(priv) > maxKeyFile {
		return nil, fmt.Errorf("%w: file larger than %d bytes", ErrKey, maxKeyFile)
	}
	var dk *dns.DNSKEY
	zp := dns.NewZoneParser(bytes.NewReader(pub), ".", "")
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		k, isKey := rr.(*dns.DNSKEY)
		if !isKey || dk != nil {
			return nil, fmt.Errorf("%w: the .key file must hold exactly one DNSKEY record", ErrKey)
		}
		dk = k
	}
	if err := zp.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	if dk == nil {
		return nil, fmt.Errorf("%w: no DNSKEY record in the .key file", ErrKey)
	}
	if dk.Algorithm != ECDSAP256SHA256 && dk.Algorithm != ED25519 {
		return nil, fmt.Errorf("%w: algorithm %d: allowed 13 (ECDSAP256SHA256) or 15 (ED25519)", ErrKey, dk.Algorithm)
	}
	if dk.Protocol != 3 || dk.Flags&dns.ZONE == 0 {
		return nil, fmt.Errorf("%w: DNSKEY protocol %d flags %d: not a zone key", ErrKey, dk.Protocol, dk.Flags)
	}
	p, err := dk.ReadPrivateKey(bytes.NewReader(priv), "private")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	signer, ok := p.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: private key of type %T", ErrKey, p)
	}
	k, err := NewKey(dk.Hdr.Name, dk.Flags, dk.Hdr.Ttl, signer)
	if err != nil {
		return nil, err
	}
	if k.dnskey.PublicKey != dk.PublicKey || k.dnskey.Algorithm != dk.Algorithm {
		return nil, fmt.Errorf("%w: the private key does not match the DNSKEY", ErrKey)
	}
	return k, nil
}

// ParsePEMKey reads a PKCS#8 private key in PEM ("PRIVATE KEY" block) and
// makes it a Key of zone with the given flags and DNSKEY TTL (PKCS#8 carries
// neither).
func ParsePEMKey(zone string, flags uint16, ttl uint32, pemBytes []byte) (*Key, error) {
	b, _ := pem.Decode(pemBytes)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%w: no PEM \"PRIVATE KEY\" block", ErrKey)
	}
	p, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	s, ok := p.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: private key of type %T", ErrKey, p)
	}
	return NewKey(zone, flags, ttl, s)
}

// ReadKeyFiles reads a BIND key pair given either file's path or the
// common base ("Kexample.com.+013+12345"): base.key and base.private.
func ReadKeyFiles(path string) (*Key, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".key"), ".private")
	pub, err := readLimited(base + ".key")
	if err != nil {
		return nil, err
	}
	priv, err := readLimited(base + ".private")
	if err != nil {
		return nil, err
	}
	return ParseKey(pub, priv)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxKeyFile+1))
}

// BaseName returns the key's BIND file name without extension:
// "K<zone>+<alg>+<tag>", the algorithm and tag zero-padded as dnssec-keygen
// writes them.
func (k *Key) BaseName() string {
	return fmt.Sprintf("K%s+%03d+%05d", k.dnskey.Hdr.Name, k.dnskey.Algorithm, k.tag)
}

// WriteFiles writes the key in BIND's format into dir: BaseName()+".key"
// (mode 0644) and BaseName()+".private" (mode 0600, created so that it is
// never readable by others, even briefly). It refuses to overwrite an
// existing file. It returns the base path (dir/BaseName()).
func (k *Key) WriteFiles(dir string) (string, error) {
	base := filepath.Join(dir, k.BaseName())
	pub := fmt.Sprintf("; This is a %s, keyid %d, for %s\n%s\n", map[bool]string{true: "key-signing key", false: "zone-signing key"}[k.SEP()], k.tag, k.dnskey.Hdr.Name, k.dnskey.String())
	if err := writeNew(base+".private", []byte(k.dnskey.PrivateKeyString(k.priv)), 0o600); err != nil {
		return "", err
	}
	if err := writeNew(base+".key", []byte(pub), 0o644); err != nil {
		return "", err
	}
	return base, nil
}

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DS returns the DS record the parent zone publishes for the key (SHA-256
// digest, RFC 4509), with the DNSKEY's TTL.
func (k *Key) DS() *dns.DS { return k.dnskey.ToDS(dns.SHA256) }

func toBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
