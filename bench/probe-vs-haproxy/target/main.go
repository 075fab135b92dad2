// Command target serves loopback health-check targets for the
// probe-vs-haproxy benchmark and counts the probes they receive.
//
// It listens on -ports ports, base … base+ports-1, on the address -listen
// names: 127.0.0.1, one target per port (up to about 12,000 targets below
// the ephemeral port range), or the wildcard 0.0.0.0, where each port
// serves every address of 127.0.0.0/8 (the checkers spread many targets
// over many loopback addresses sharing a few ports; the traffic stays on
// loopback). Several such processes can share the work, each with its own
// ports and control address. Every accepted connection
// counts as a TCP probe; a connection that sends an HTTP request gets
// "200 OK" and counts as an HTTP probe; then the server closes it. With
// -tls every target speaks TLS 1.3 only, with an ECDSA P-256 certificate
// (for 127.0.0.1 and target.test) issued at start by a throw-away CA whose
// certificate is written to the file -ca names (with its key to -cakey;
// when both files exist already, that CA is used instead, so several
// processes serve certificates of one CA; -tls12 serves TLS 1.2 too, for
// clients that offer no more); the key exchange is X25519
// only and session tickets are on, so clients may resume; each completed
// handshake counts as full or resumed. A control listener (-control)
// answers "GET /count" with "<accepted> <http> <syns> <full> <resumed>\n",
// the totals so far, which the benchmark script reads before and after its
// window. <syns> counts TCP SYNs reaching the targets' ports (with -syn, on
// Linux, as root): HAProxy's connect-only checks never complete the
// handshake, so only a SYN count sees them at the target; -1 when off.
// <full> and <resumed> count TLS handshakes (0 without -tls). On SIGTERM
// or SIGINT, with -tls, it prints to stderr what the handshakes negotiated:
// one line per protocol version, cipher suite, key exchange and kind (full
// or resumed) with its count.
package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var accepted, answered, syns, fullTLS, resumedTLS atomic.Int64

// synPoll, when SYNs are counted, brings syns up to date (see countSYNs).
var synPoll func()

// tlsConfig is the targets' TLS configuration, nil for plain TCP.
var tlsConfig *tls.Config

const response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"

func main() {
	n := flag.Int("ports", 1000, "number of ports listened on (base … base+ports-1)")
	base := flag.Int("base", 20000, "first port")
	listen := flag.String("listen", "127.0.0.1", "the address the ports listen on (0.0.0.0: every loopback address)")
	accepters := flag.Int("accepters", 0, "goroutines accepting on each port (0: 64 / ports, at least 1)")
	control := flag.String("control", "127.0.0.1:19999", "control address (GET /count)")
	countSyn := flag.Bool("syn", true, "count SYNs to the targets' ports with a packet socket (Linux, CAP_NET_RAW)")
	useTLS := flag.Bool("tls", false, "serve TLS 1.3 (ECDSA P-256, X25519, session tickets on)")
	tls12 := flag.Bool("tls12", false, "with -tls: serve TLS 1.2 too (the client chooses; session tickets resume it without a key exchange)")
	caFile := flag.String("ca", "", "with -tls: the CA certificate (PEM): written, or read with -cakey when both exist")
	caKeyFile := flag.String("cakey", "", "with -tls and -ca: the CA key (PEM), written or read with the certificate")
	flag.Parse()

	if *useTLS {
		cfg, err := newTLSConfig(*caFile, *caKeyFile)
		if err == nil && *tls12 {
			cfg.MinVersion = tls.VersionTLS12
		}
		if err != nil {
			log.Fatalf("tls: %v", err)
		}
		tlsConfig = cfg
	}
	if *accepters <= 0 {
		*accepters = max(1, 64 / *n)
	}

	if *countSyn {
		ready := make(chan error, 1)
		go countSYNs(*base, *n, ready)
		if err := <-ready; err != nil {
			log.Printf("not counting SYNs: %v", err)
			syns.Store(-1)
		}
	} else {
		syns.Store(-1)
	}

	for i := range *n {
		ln, err := net.Listen("tcp", net.JoinHostPort(*listen, strconv.Itoa(*base+i)))
		if err != nil {
			log.Fatalf("listen on port %d: %v", *base+i, err)
		}
		for range *accepters {
			go serve(ln)
		}
	}
	cl, err := net.Listen("tcp", *control)
	if err != nil {
		log.Fatalf("control: %v", err)
	}
	go controlLoop(cl)
	fmt.Println("ready")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	printNegotiated()
}

// negotiated counts handshakes by what they negotiated: "TLS 1.3
// TLS_AES_128_GCM_SHA256 X25519 resumed" → *atomic.Int64.
var negotiated sync.Map

// countNegotiated counts one completed handshake in negotiated.
func countNegotiated(cs tls.ConnectionState) {
	kind := "full"
	if cs.DidResume {
		kind = "resumed"
	}
	key := fmt.Sprintf("%s %s %s %s", tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite), cs.CurveID, kind)
	v, ok := negotiated.Load(key)
	if !ok {
		v, _ = negotiated.LoadOrStore(key, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// printNegotiated prints negotiated's counts to stderr, one line each.
func printNegotiated() {
	var lines []string
	negotiated.Range(func(k, v any) bool {
		lines = append(lines, fmt.Sprintf("tls handshakes: %s: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(os.Stderr, l)
	}
}

// serve accepts and answers connections one at a time: a port serving one
// target sees one probe a second, so a goroutine per connection would only
// add cost; a port serving many runs several serve loops (-accepters).
func serve(ln net.Listener) {
	buf := make([]byte, 1024)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Printf("accept: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		accepted.Add(1)
		if tlsConfig != nil {
			handleTLS(c, buf)
		} else {
			handle(c, buf)
		}
	}
}

// handleTLS completes the TLS handshake, counts it as full or resumed,
// then answers as handle does.
func handleTLS(c net.Conn, buf []byte) {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	tc := tls.Server(c, tlsConfig)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return
	}
	cs := tc.ConnectionState()
	countNegotiated(cs)
	if cs.DidResume {
		resumedTLS.Add(1)
	} else {
		fullTLS.Add(1)
	}
	handle(tc, buf)
}

// newTLSConfig returns the targets' configuration: an ECDSA P-256
// certificate for 127.0.0.1 and target.test issued by the CA in caFile and
// caKeyFile (PEM) when both exist, else by a new CA whose certificate (and,
// with caKeyFile, key) it writes there (caFile empty: not written).
func newTLSConfig(caFile, caKeyFile string) (*tls.Config, error) {
	ca, caKey, err := loadCA(caFile, caKeyFile)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if ca == nil {
		if caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, err
		}
		caTmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "probe-vs-haproxy CA"},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(24 * time.Hour),
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign,
		}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		if ca, err = x509.ParseCertificate(caDER); err != nil {
			return nil, err
		}
		if caFile != "" {
			if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
				return nil, err
			}
		}
		if caKeyFile != "" {
			kder, err := x509.MarshalECPrivateKey(caKey)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(caKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
				return nil, err
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "target.test"},
		DNSNames:     []string{"target.test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
		// X25519 alone: Go's default adds the X25519MLKEM768 hybrid, which
		// OpenSSL 3.0 (HAProxy 2.6) does not offer.
		CurvePreferences: []tls.CurveID{tls.X25519},
	}, nil
}

// loadCA reads the CA certificate and key when both files exist; nil and
// no error when either name is empty or either file is absent.
func loadCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	if certFile == "" || keyFile == "" {
		return nil, nil, nil
	}
	cp, err := os.ReadFile(certFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	kp, err := os.ReadFile(keyFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(cp)
	kb, _ := pem.Decode(kp)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s: no PEM block", certFile, keyFile)
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

// handle answers one request if one arrives (the end of its head within
// 1 KiB), then closes.
func handle(c net.Conn, buf []byte) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		if bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
			if _, err := c.Write([]byte(response)); err == nil {
				answered.Add(1)
			}
			return
		}
		if err != nil {
			return // a TCP check: connected and gone
		}
	}
}

func controlLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// Read the whole request before answering and half-close after:
		// closing with unread bytes makes the kernel send a reset, which
		// can destroy the reply before the script reads it (a lost
		// control reply aborts a row).
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" || line == "\n" {
				break
			}
		}
		if synPoll != nil {
			synPoll()
		}
		body := fmt.Sprintf("%d %d %d %d %d\n", accepted.Load(), answered.Load(), syns.Load(), fullTLS.Load(), resumedTLS.Load())
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
			_, _ = io.Copy(io.Discard, c) // until the client closes (or the deadline)
		}
		c.Close()
	}
}
