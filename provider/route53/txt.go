package route53

import (
	"strings"
)

// maxTXTString is the longest character-string a TXT record holds (RFC
// 1035 section 3.3); Route 53 refuses longer ones (TXTRDATATooLong).
const maxTXTString = 255

// encodeTXT writes text as Route 53 wants a TXT value: one or more quoted
// strings of at most 255 bytes each, separated by spaces, with '"' and '\'
// escaped by a backslash and bytes outside printable ASCII as \ooo
// (three octal digits), as Route 53's documentation prescribes.
func encodeTXT(text string) string {
	if text == "" {
		return `""`
	}
	var b strings.Builder
	for first := true; len(text) > 0; first = false {
		n := min(len(text), maxTXTString)
		chunk := text[:n]
		text = text[n:]
		if !first {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for i := 0; i < len(chunk); i++ {
			c := chunk[i]
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 || c >= 0x7f:
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + (c>>3)&7)
				b.WriteByte('0' + c&7)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

// decodeTXT reads a Route 53 TXT value back into the text it holds: the
// quoted strings joined without separators, escapes undone (\" \\ and
// \ooo octal; a backslash before any other byte is that byte). Unquoted
// tokens are taken as they are. It never fails: malformed input decodes to
// a best effort, never a panic.
func decodeTXT(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '"':
			i++
			for i < len(v) && v[i] != '"' {
				i = unescapeAt(v, i, &b)
			}
			i++ // the closing quote, when present
		default:
			for i < len(v) && v[i] != ' ' && v[i] != '\t' && v[i] != '"' {
				i = unescapeAt(v, i, &b)
			}
		}
	}
	return b.String()
}

// unescapeAt writes the (possibly escaped) byte at v[i] to b and returns
// the index after it.
func unescapeAt(v string, i int, b *strings.Builder) int {
	if v[i] != '\\' || i+1 >= len(v) {
		b.WriteByte(v[i])
		return i + 1
	}
	if i+3 < len(v) && isOctal(v[i+1]) && isOctal(v[i+2]) && isOctal(v[i+3]) {
		n := int(v[i+1]-'0')<<6 | int(v[i+2]-'0')<<3 | int(v[i+3]-'0')
		if n <= 0xff {
			b.WriteByte(byte(n))
			return i + 4
		}
	}
	b.WriteByte(v[i+1])
	return i + 2
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// decodeName undoes Route 53's escapes in a record name (\052 for '*',
// octal for other special bytes) and lower-cases it.
func decodeName(n string) string {
	if !strings.Contains(n, `\`) {
		return strings.ToLower(n)
	}
	var b strings.Builder
	for i := 0; i < len(n); {
		i = unescapeAt(n, i, &b)
	}
	return strings.ToLower(b.String())
}
