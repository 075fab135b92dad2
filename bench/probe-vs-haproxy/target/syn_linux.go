//go:build linux

package main

import (
	"fmt"
	"net"
	"sync"
	"syscall"
)

// countSYNs counts TCP SYNs (without ACK) arriving on the loopback interface
// for ports [base, base+n), through a packet socket with a classic BPF
// filter that passes only those packets. It is how the target sees
// HAProxy's TCP checks: HAProxy aborts a connect-only check with a RST
// before it acknowledges the SYN-ACK, so the connection never reaches
// accept(). Needs CAP_NET_RAW. It reports setup on ready and sets synPoll.
//
// The socket is never read: its receive buffer is the smallest the kernel
// allows, so after the first few the packets the filter passes are dropped
// and counted, and synPoll adds the kernel's count (PACKET_STATISTICS:
// packets passed, queued or dropped, reset by each read) to syns. Reading
// each SYN instead woke this process for every probe, and on loopback the
// wake-up (a thread on the other core: an inter-processor interrupt) is
// made by the sender, the checker, on its own core: about half a wake-up
// and half an interrupt per check were charged to both checkers.
func countSYNs(base, n int, ready chan<- error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		ready <- err
		return
	}
	// Bound to IPv4 (ETH_P_IP), not every protocol (ETH_P_ALL): such a
	// socket sees only received packets, so the kernel does not copy
	// each packet the checker sends to it as well (on loopback, in the
	// checker's system call).
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons(syscall.ETH_P_IP)))
	if err != nil {
		ready <- fmt.Errorf("packet socket: %w", err)
		return
	}
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
	// The smallest buffer (the kernel raises 1 to its minimum): packets
	// beyond it are dropped before they are copied, and counted.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1); err != nil {
		syscall.Close(fd)
		ready <- fmt.Errorf("packet socket buffer: %w", err)
		return
	}
	//lint:ignore SA1019 a classic BPF filter on a packet socket is all this needs; x/net/bpf would add a dependency to a benchmark tool
	if err := syscall.AttachLsf(fd, prog); err != nil {
		syscall.Close(fd)
		ready <- fmt.Errorf("attach BPF filter: %w", err)
		return
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_IP), Ifindex: lo.Index}); err != nil {
		syscall.Close(fd)
		ready <- fmt.Errorf("bind to lo: %w", err)
		return
	}
	// Packets counted from the bind on: the statistics restart at zero.
	if _, err := packetStats(fd); err != nil {
		syscall.Close(fd)
		ready <- err
		return
	}
	var mu sync.Mutex
	synPoll = func() {
		mu.Lock()
		defer mu.Unlock()
		if n, err := packetStats(fd); err == nil {
			syns.Add(int64(n))
		} else {
			syns.Store(-1)
		}
	}
	ready <- nil
}

// packetStats returns the packets packet socket fd's filter passed since
// the last call (PACKET_STATISTICS: those queued plus those dropped; the
// kernel resets its counts on each read). It reads the first field of
// struct tpacket_stats, tp_packets, as an int: the kernel copies as many
// bytes as asked, and GetsockoptInt exists on every Linux architecture
// (a raw getsockopt does not on 386, where it goes through socketcall).
func packetStats(fd int) (uint32, error) {
	const solPacket, packetStatistics = 263, 6 // SOL_PACKET, PACKET_STATISTICS
	n, err := syscall.GetsockoptInt(fd, solPacket, packetStatistics)
	if err != nil {
		return 0, fmt.Errorf("packet statistics: %w", err)
	}
	return uint32(n), nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
