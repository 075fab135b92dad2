// Command target serves N loopback health-check targets for the
// probe-vs-haproxy benchmark and counts the probes they receive.
//
// It listens on 127.0.0.1 ports base … base+N-1. Every accepted connection
// counts as a TCP probe; a connection that sends an HTTP request gets
// "200 OK" and counts as an HTTP probe; then the server closes it. A control
// listener (-control) answers "GET /count" with "<accepted> <http> <syns>\n",
// the totals so far, which the benchmark script reads before and after its
// window. <syns> counts TCP SYNs reaching the targets' ports (with -syn, on
// Linux, as root): HAProxy's connect-only checks never complete the
// handshake, so only a SYN count sees them at the target; -1 when off.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

var accepted, answered, syns atomic.Int64

const response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"

func main() {
	n := flag.Int("n", 1000, "number of targets")
	base := flag.Int("base", 20000, "first port")
	control := flag.String("control", "127.0.0.1:19999", "control address (GET /count)")
	countSyn := flag.Bool("syn", true, "count SYNs to the targets' ports with a packet socket (Linux, CAP_NET_RAW)")
	flag.Parse()

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
		handle(c, buf)
	}
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
		buf := make([]byte, 512)
		_, _ = c.Read(buf)
		body := fmt.Sprintf("%d %d %d\n", accepted.Load(), answered.Load(), syns.Load())
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		c.Close()
	}
}
