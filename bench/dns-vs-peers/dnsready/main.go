// Command dnsready waits until a DNS server answers, and prints when it
// did (see bench/dns-vs-peers/scale.sh):
//
//	dnsready -addr 127.0.0.1:PORT -name NAME [-every 5ms] [-timeout 900s] [-pid PID] [-any]
//
// It sends one A query for NAME over UDP every -every (a fresh send each
// time, the same message ID) until a reply comes: NOERROR with at least
// one answer record, or with -any a reply of any kind. It then prints the
// time of the reply as Unix seconds with nanoseconds ("date +%s.%N"'s
// form) and exits 0; it exits 1 when no such reply came within -timeout
// or when process -pid ended first, 2 on bad flags.
//
// scale.sh times a server's start with it: a server that binds its port
// only once its zone is loaded loses every query sent before, and
// dnsperf's shortest usable timeout then waited out a second per lost
// probe (the load figure was the probe's, not the server's); with a
// connected socket the port's refusal comes back at once, so the figure is
// the server's to within -every.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

func main() {
	addr := flag.String("addr", "", "server address, host:port")
	name := flag.String("name", "", "the name to ask for (type A)")
	every := flag.Duration("every", 5*time.Millisecond, "interval between queries, and the wait for each reply")
	timeout := flag.Duration("timeout", 900*time.Second, "give up after this long")
	pid := flag.Int("pid", 0, "give up when this process has ended (0: no process)")
	anyReply := flag.Bool("any", false, "any reply counts, not only NOERROR with an answer")
	flag.Parse()
	if *addr == "" || *name == "" || *every <= 0 || *timeout <= 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "dnsready: -addr and -name are required; -every and -timeout must be positive")
		os.Exit(2)
	}
	at, err := wait(*addr, dns.Fqdn(*name), *every, *timeout, *pid, *anyReply)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dnsready:", err)
		os.Exit(1)
	}
	fmt.Printf("%d.%09d\n", at.Unix(), at.Nanosecond())
}

// wait queries name at addr every interval until a reply that counts
// (see the package comment) and returns when it came.
func wait(addr, name string, every, timeout time.Duration, pid int, anyReply bool) (time.Time, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	q, err := m.Pack()
	if err != nil {
		return time.Time{}, err
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return time.Time{}, err
	}
	defer conn.Close()
	end := time.Now().Add(timeout)
	buf := make([]byte, dns.MaxMsgSize)
	for next := time.Now(); ; {
		if time.Now().After(end) {
			return time.Time{}, fmt.Errorf("no reply from %s within %v", addr, timeout)
		}
		if pid > 0 && !alive(pid) {
			return time.Time{}, fmt.Errorf("process %d ended before %s answered", pid, addr)
		}
		next = next.Add(every)
		if _, err := conn.Write(q); err != nil && !refused(err) {
			return time.Time{}, err
		}
		// Read until the next send is due: a refusal (the port not bound
		// yet, reported by the connected socket) or a stray reply waits
		// out the interval.
		if err := conn.SetReadDeadline(next); err != nil {
			return time.Time{}, err
		}
		for {
			n, err := conn.Read(buf)
			if err != nil {
				if refused(err) {
					time.Sleep(time.Until(next))
					break
				}
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					break
				}
				return time.Time{}, err
			}
			now := time.Now()
			r := new(dns.Msg)
			if r.Unpack(buf[:n]) != nil || r.Id != m.Id || !r.Response {
				continue
			}
			if anyReply || r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
				return now, nil
			}
		}
	}
}

// refused reports whether err is the port's refusal (ICMP port
// unreachable on a connected UDP socket).
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		p, err := os.FindProcess(pid) // no /proc: ask the kernel
		return err == nil && p.Signal(syscall.Signal(0)) == nil
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
