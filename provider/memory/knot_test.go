package memory_test

import (
	"errors"
	"net"
	"time"
)

// exchange sends raw query bytes to addr and returns the raw reply, or nil
// when the server sends none within the wait (knotd drops some malformed
// messages).
func exchange(addr string, q []byte, tcp bool, wait time.Duration) ([]byte, error) {
	network := "udp"
	if tcp {
		network = "tcp"
	}
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	if tcp {
		if _, err := c.Write(append([]byte{byte(len(q) >> 8), byte(len(q))}, q...)); err != nil {
			return nil, err
		}
		var l [2]byte
		if _, err := readFull(c, l[:]); err != nil {
			return nil, nil
		}
		out := make([]byte, int(l[0])<<8|int(l[1]))
		if _, err := readFull(c, out); err != nil {
			return nil, nil
		}
		return out, nil
	}
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil
		}
		return nil, err
	}
	return buf[:n], nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
