package zoneops

import "strings"

// MaxTXTString is the longest character-string a TXT record holds on the
// wire (RFC 1035 section 3.3).
const MaxTXTString = 255

// QuoteTXT writes text in zone-file presentation form: quoted
// character-strings of at most 255 bytes each, separated by spaces, with
// '"' and '\' escaped by a backslash and bytes outside printable ASCII as
// \DDD (three decimal digits, RFC 1035 section 5.1). The empty text is "".
func QuoteTXT(text string) string { return quoteTXT(text, Decimal) }

// Escape is how a quoted TXT string writes a byte outside printable ASCII:
// three decimal digits (\DDD, RFC 1035) or, as Route 53 documents, three
// octal digits (\ooo).
type Escape uint8

const (
	// Decimal escapes bytes as \DDD (zone files, RFC 2136 servers).
	Decimal Escape = iota
	// Octal escapes bytes as \ooo (Route 53).
	Octal
)

// QuoteTXTEscaped is QuoteTXT with the given byte escape.
func QuoteTXTEscaped(text string, e Escape) string { return quoteTXT(text, e) }

// UnquoteTXTEscaped is UnquoteTXT reading the given byte escape.
func UnquoteTXTEscaped(v string, e Escape) string { return unquoteTXT(v, e) }

func quoteTXT(text string, e Escape) string {
	if text == "" {
		return `""`
	}
	var b strings.Builder
	b.Grow(len(text) + 3*(len(text)/MaxTXTString+1))
	for first := true; len(text) > 0; first = false {
		n := min(len(text), MaxTXTString)
		if !first {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for i := 0; i < n; i++ {
			c := text[i]
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 || c >= 0x7f:
				b.WriteByte('\\')
				if e == Octal {
					b.WriteByte('0' + c>>6)
					b.WriteByte('0' + (c>>3)&7)
					b.WriteByte('0' + c&7)
				} else {
					b.WriteByte('0' + c/100)
					b.WriteByte('0' + c/10%10)
					b.WriteByte('0' + c%10)
				}
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		text = text[n:]
	}
	return b.String()
}

// UnquoteTXT reads presentation-form TXT data back into the text it
// holds: quoted strings joined without separators, \DDD (decimal, at most
// 255) and backslash escapes undone; unquoted tokens are taken as they
// are (a provider may return a single unquoted word). It never fails:
// malformed input decodes to a best effort, never a panic.
func UnquoteTXT(v string) string { return unquoteTXT(v, Decimal) }

func unquoteTXT(v string, e Escape) string {
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '"':
			i++
			for i < len(v) && v[i] != '"' {
				i = unescapeAt(v, i, e, &b)
			}
			i++
		default:
			for i < len(v) && v[i] != ' ' && v[i] != '\t' && v[i] != '"' {
				i = unescapeAt(v, i, e, &b)
			}
		}
	}
	return b.String()
}

// unescapeAt writes the (possibly escaped) byte at v[i] to b and returns
// the index after it.
func unescapeAt(v string, i int, e Escape, b *strings.Builder) int {
	if v[i] != '\\' || i+1 >= len(v) {
		b.WriteByte(v[i])
		return i + 1
	}
	digit, radix := isDigit, 10
	if e == Octal {
		digit, radix = isOctal, 8
	}
	if i+3 < len(v) && digit(v[i+1]) && digit(v[i+2]) && digit(v[i+3]) {
		n := (int(v[i+1]-'0')*radix+int(v[i+2]-'0'))*radix + int(v[i+3]-'0')
		if n <= 0xff {
			b.WriteByte(byte(n))
			return i + 4
		}
	}
	b.WriteByte(v[i+1])
	return i + 2
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
