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
	"bufio"
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

func serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			log.Printf("accept: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		accepted.Add(1)
		go handle(c)
	}
}

// handle answers one request if one arrives, then closes.
func handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReaderSize(c, 1024)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // a TCP check: connected and gone
		}
		if len(line) <= 2 { // end of the request head
			if _, err := c.Write([]byte(response)); err == nil {
				answered.Add(1)
			}
			return
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
