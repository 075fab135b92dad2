package record

// Fast checks for the common case of Plan's inputs: names that are already
// normalised and IPv4 addresses already in their canonical form. Plan runs
// them over every record of every zone and every value of the desired state
// on each reconcile, so they answer "already canonical" without parsing,
// formatting or allocating, and leave everything else to the general code.

const (
	ones8 = 0x0101010101010101
	low7  = 0x7f7f7f7f7f7f7f7f
	high8 = 0x8080808080808080
)

// load8 returns the first eight bytes of s as a little-endian word (the
// compiler turns it into one load, with one bounds check).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainWord reports whether none of the eight bytes of x is an ASCII upper
// case letter or a byte at or below the space (controls, space). It is
// stricter than plainByte: a false answer only means "look byte by byte".
func plainWord(x uint64) bool {
	y := x & low7                  // each byte without its high bit: no carries below
	above := y + ones8*(0x7f-0x20) // high bit set where y > 0x20
	fromA := y + ones8*(0x80-'A')  // high bit set where y >= 'A'
	pastZ := y + ones8*(0x7f-'Z')  // high bit set where y > 'Z'
	bad := (^above | fromA&^pastZ) // high bit set where y <= 0x20 or 'A' <= y <= 'Z'
	return bad&^x&high8 == 0       // bytes with their high bit set are never bad
}

// plainByte reports whether c may appear in a plain name.
func plainByte(c byte) bool {
	return !((c >= 'A' && c <= 'Z') || c == ' ' || c == '\t' || c == '\n' || c == '\r')
}

// plainBytes reports whether every byte of s[lo:hi] may appear in a plain
// name.
func plainBytes(s string, lo, hi int) bool {
	for i := lo; i < hi; i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

// plainName reports whether name is already a normalised relative name:
// not empty, no upper case, no spaces, no trailing dot. It looks at eight
// bytes at a time and byte by byte only where a word is in doubt.
func plainName(name string) bool {
	n := len(name)
	if n == 0 || name[n-1] == '.' {
		return false
	}
	if n < 8 {
		return plainBytes(name, 0, n)
	}
	for i := 0; ; i += 8 {
		if i+8 > n {
			i = n - 8 // the last word overlaps the one before
		}
		if !plainWord(load8(name[i:])) && !plainBytes(name, i, i+8) {
			return false
		}
		if i+8 == n {
			return true
		}
	}
}

// canonicalIPv4 reports whether v is an IPv4 address in dotted-quad form
// exactly as net/netip formats it: four decimal fields of 0 to 255 without
// leading zeros. netip.ParseAddr accepts exactly these strings as IPv4 (it
// refuses leading zeros), and netip.Addr.String gives them back unchanged.
func canonicalIPv4(v string) bool {
	n := len(v)
	if n < 7 || n > 15 {
		return false
	}
	for i, dots := 0, 0; ; dots++ {
		// A field: a digit, and up to two more unless it is "0".
		if i >= n {
			return false
		}
		d := v[i] - '0'
		if d > 9 {
			return false
		}
		i++
		if d != 0 {
			field := uint(d)
			for k := 0; k < 2 && i < n; k++ {
				d := v[i] - '0'
				if d > 9 {
					break
				}
				field = field*10 + uint(d)
				i++
			}
			if field > 255 {
				return false
			}
		}
		if i == n {
			return dots == 3
		}
		if v[i] != '.' || dots == 3 {
			return false
		}
		i++
	}
}

// appendIPv4 appends ip in dotted-quad form, exactly as netip.Addr.AppendTo
// writes an IPv4 address, without its general path.
func appendIPv4(b []byte, ip [4]byte) []byte {
	for i, x := range ip {
		if i > 0 {
			b = append(b, '.')
		}
		switch {
		case x >= 100:
			b = append(b, '0'+x/100, '0'+x/10%10, '0'+x%10)
		case x >= 10:
			b = append(b, '0'+x/10, '0'+x%10)
		default:
			b = append(b, '0'+x)
		}
	}
	return b
}
