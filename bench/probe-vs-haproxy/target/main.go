// Command target serves N loopback health-check targets for the
// probe-vs-haproxy benchmark and counts the probes they receive.
//
// It listens on 127.0.0.1 ports base … base+N-1. Every accepted connection
// counts as a TCP probe; a connection that sends an HTTP request gets
// "200 OK" and counts as an HTTP probe; then the server closes it. With
// -tls every target speaks TLS 1.3 only, with an ECDSA P-256 certificate
// (for 127.0.0.1 and target.test) issued at start by a throw-away CA whose
// certificate is written to the file -ca names; the key exchange is X25519
// only and session tickets are on, so clients may resume; each completed
// handshake counts as full or resumed. A control listener (-control)
// answers "GET /count" with "<accepted> <http> <syns> <full> <resumed>\n",
// the totals so far, which the benchmark script reads before and after its
// window. <syns> counts TCP SYNs reaching the targets' ports (with -syn, on
// Linux, as root): HAProxy's connect-only checks never complete the
// handshake, so only a SYN count sees them at the target; -1 when off.
// <full> and <resumed> count TLS handshakes (0 without -tls).
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
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

var accepted, answered, syns, fullTLS, resumedTLS atomic.Int64

// tlsConfig is the targets' TLS configuration, nil for plain TCP.
var tlsConfig *tls.Config

const response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"

func main() {
	n := flag.Int("n", 1000, "number of targets")
	base := flag.Int("base", 20000, "first port")
	control := flag.String("control", "127.0.0.1:19999", "control address (GET /count)")
	countSyn := flag.Bool("syn", true, "count SYNs to the targets' ports with a packet socket (Linux, CAP_NET_RAW)")
	useTLS := flag.Bool("tls", false, "serve TLS 1.3 (ECDSA P-256, X25519, session tickets on)")
	caFile := flag.String("ca", "", "with -tls: write the CA certificate (PEM) to this file")
	flag.Parse()

	if *useTLS {
		cfg, caPEM, err := newTLSConfig()
		if err != nil {
			log.Fatalf("tls: %v", err)
		}
		if *caFile != "" {
			if err := os.WriteFile(*caFile, caPEM, 0o644); err != nil {
				log.Fatalf("tls: %v", err)
			}
		}
		tlsConfig = cfg
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
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*base+i))
		if err != nil {
			log.Fatalf("listen on port %d: %v", *base+i, err)
		}
		go serve(ln)
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
}

// serve accepts and answers connections one at a time: a target sees one
// probe a second, so a goroutine per connection would only add cost.
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
	if tc.ConnectionState().DidResume {
		resumedTLS.Add(1)
	} else {
		fullTLS.Add(1)
	}
	handle(tc, buf)
}

// newTLSConfig issues a CA and, from it, an ECDSA P-256 certificate for
// 127.0.0.1 and target.test, and returns the targets' configuration and the
// CA certificate in PEM.
func newTLSConfig() (*tls.Config, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
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
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
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
		return nil, nil, err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
		// X25519 alone: Go's default adds the X25519MLKEM768 hybrid, which
		// OpenSSL 3.0 (HAProxy 2.6) does not offer.
		CurvePreferences: []tls.CurveID{tls.X25519},
	}
	return cfg, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
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
		body := fmt.Sprintf("%d %d %d %d %d\n", accepted.Load(), answered.Load(), syns.Load(), fullTLS.Load(), resumedTLS.Load())
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
			_, _ = io.Copy(io.Discard, c) // until the client closes (or the deadline)
		}
		c.Close()
	}
}
