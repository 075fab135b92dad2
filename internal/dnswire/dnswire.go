// Package dnswire holds the few DNS wire-format walks that the memory
// store and the packages serving it (dnsserver, zonetransfer) share: they
// read a message's names in place, without decoding it.
package dnswire

// SkipName returns the offset just past the domain name at off: labels of
// at most 63 bytes ending in the root label or a compression pointer, at
// most 255 bytes of labels.
func SkipName(b []byte, off int) (int, bool) {
	for n := 0; ; {
		if off >= len(b) {
			return 0, false
		}
		c := int(b[off])
		switch c & 0xC0 {
		case 0x00:
			if c == 0 {
				return off + 1, true
			}
			n += c + 1
			if n > 255 {
				return 0, false
			}
			off += 1 + c
		case 0xC0:
			if off+2 > len(b) {
				return 0, false
			}
			return off + 2, true
		default:
			return 0, false
		}
	}
}

// NameEnd returns the offset just past the uncompressed wire name at off
// (a question's name is never compressed); false when the name is cut
// short or compressed.
func NameEnd(b []byte, off int) (int, bool) {
	for off < len(b) {
		l := int(b[off])
		if l == 0 {
			return off + 1, true
		}
		if l&0xC0 != 0 {
			return 0, false
		}
		off += 1 + l
	}
	return 0, false
}

// Scan walks the sections of a message as its header counts them,
// without decoding records. It returns the offset just past the first
// question (0 when that is not whole), the offset of an OPT record in the
// additional section seen whole (-1 when none), and whether the message is
// well formed: every counted question and record present and whole, and
// nothing after the last one (RFC 1035 section 4.1).
func Scan(b []byte) (qEnd, opt int, ok bool) {
	opt = -1
	if len(b) < 12 {
		return 0, opt, false
	}
	count := func(i int) int { return int(b[i])<<8 | int(b[i+1]) }
	qd, an, ns, ar := count(4), count(6), count(8), count(10)
	off := 12
	for i := range qd {
		e, good := SkipName(b, off)
		if !good || e+4 > len(b) {
			return qEnd, opt, false
		}
		off = e + 4
		if i == 0 {
			qEnd = off
		}
	}
	for i := range an + ns + ar {
		e, good := SkipName(b, off)
		if !good || e+10 > len(b) {
			return qEnd, opt, false
		}
		end := e + 10 + (int(b[e+8])<<8 | int(b[e+9]))
		if end > len(b) {
			return qEnd, opt, false
		}
		if i >= an+ns && e == off+1 && b[e] == 0 && b[e+1] == 41 /* OPT */ && opt < 0 {
			opt = off
		}
		off = end
	}
	return qEnd, opt, off == len(b)
}

// MaxUDP is the largest UDP reply the store makes (memory.Config.MaxUDPSize
// is at most this) and the size of the DNS server's UDP buffers.
const MaxUDP = 4096
