//go:build linux

package main

import (
	"fmt"
	"net"
	"syscall"
)

// countSYNs counts TCP SYNs (without ACK) arriving on the loopback interface
// for ports [base, base+n), through a packet socket with a classic BPF
// filter so only those packets reach user space. It is how the target sees
// HAProxy's TCP checks: HAProxy aborts a connect-only check with a RST
// before it acknowledges the SYN-ACK, so the connection never reaches
// accept(). Needs CAP_NET_RAW. It reports setup on ready, then counts until
// the socket fails.
func countSYNs(base, n int, ready chan<- error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		ready <- err
		return
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons(syscall.ETH_P_ALL)))
	if err != nil {
		ready <- fmt.Errorf("packet socket: %w", err)
		return
	}
	defer syscall.Close(fd)
	const (
		ld   = syscall.BPF_LD
		jmp  = syscall.BPF_JMP
		ret  = syscall.BPF_RET
		pkt  = 0xfffff000 + 4 // SKF_AD_OFF + SKF_AD_PKTTYPE
		out  = 4              // PACKET_OUTGOING: lo shows each packet twice
		eth  = 14             // frames on lo carry an Ethernet header
		drop = 14             // index of the final "drop"
	)
	// Jumps are relative: the target is pc + 1 + offset.
	prog := []syscall.SockFilter{
		{Code: ld | syscall.BPF_W | syscall.BPF_ABS, K: pkt},                                  // 0
		{Code: jmp | syscall.BPF_JEQ | syscall.BPF_K, K: out, Jt: drop - 2},                   // 1: outgoing copy
		{Code: ld | syscall.BPF_H | syscall.BPF_ABS, K: 12},                                   // 2: ethertype
		{Code: jmp | syscall.BPF_JEQ | syscall.BPF_K, K: 0x0800, Jf: drop - 4},                // 3: IPv4
		{Code: ld | syscall.BPF_B | syscall.BPF_ABS, K: eth + 9},                              // 4: protocol
		{Code: jmp | syscall.BPF_JEQ | syscall.BPF_K, K: 6, Jf: drop - 6},                     // 5: TCP
		{Code: syscall.BPF_LDX | syscall.BPF_B | syscall.BPF_MSH, K: eth},                     // 6: X = IP header length
		{Code: ld | syscall.BPF_B | syscall.BPF_IND, K: eth + 13},                             // 7: TCP flags
		{Code: syscall.BPF_ALU | syscall.BPF_AND | syscall.BPF_K, K: 0x12},                    // 8: SYN and ACK bits
		{Code: jmp | syscall.BPF_JEQ | syscall.BPF_K, K: 0x02, Jf: drop - 10},                 // 9: SYN alone
		{Code: ld | syscall.BPF_H | syscall.BPF_IND, K: eth + 2},                              // 10: destination port
		{Code: jmp | syscall.BPF_JGE | syscall.BPF_K, K: uint32(base), Jf: drop - 12},         // 11: ≥ base
		{Code: jmp | syscall.BPF_JGT | syscall.BPF_K, K: uint32(base + n - 1), Jt: drop - 13}, // 12: ≤ last
		{Code: ret | syscall.BPF_K, K: 64},                                                    // 13: keep
		{Code: ret | syscall.BPF_K, K: 0},                                                     // 14: drop
	}
	// A big buffer so a busy machine does not make the kernel drop SYN
	// copies before this goroutine reads them (FORCE works as root).
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, 64<<20); err != nil {
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<20)
	}
	//lint:ignore SA1019 a classic BPF filter on a packet socket is all this needs; x/net/bpf would add a dependency to a benchmark tool
	if err := syscall.AttachLsf(fd, prog); err != nil {
		ready <- fmt.Errorf("attach BPF filter: %w", err)
		return
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_ALL), Ifindex: lo.Index}); err != nil {
		ready <- fmt.Errorf("bind to lo: %w", err)
		return
	}
	ready <- nil
	buf := make([]byte, 128)
	for {
		if _, _, err := syscall.Recvfrom(fd, buf, 0); err != nil {
			if err == syscall.EINTR {
				continue
			}
			return
		}
		syns.Add(1)
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
