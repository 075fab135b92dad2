package zoneops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/libdns/libdns"
)

// TXT records with several character-strings. libdns documents TXT.Text as
// one text; gslbkit carries a TXT whose strings are not that text cut into
// 255-byte pieces as a libdns.RR whose Data is zone-file presentation form
// (FormatTXTStrings), which always begins with a double quote.

// SplitTXT cuts text into strings of at most 255 bytes; "" is one empty
// string.
func SplitTXT(text string) []string {
	if text == "" {
		return []string{""}
	}
	out := make([]string, 0, (len(text)+MaxTXTString-1)/MaxTXTString)
	for len(text) > 0 {
		n := min(len(text), MaxTXTString)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// IsTXTStrings reports whether TXT data given in a libdns.RR is
// presentation form (it begins with a double quote) rather than plain text.
func IsTXTStrings(data string) bool { return strings.HasPrefix(data, `"`) }

// ParseTXTStrings reads zone-file presentation form (RFC 1035 section 5.1):
// character-strings separated by spaces or tabs, each quoted or a run of
// non-blank bytes, with \DDD (decimal) and \X escapes. A string longer than
// 255 bytes is cut into 255-byte strings. ok is false for an unterminated
// quote or no string at all.
func ParseTXTStrings(s string) (out []string, ok bool) {
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		var b strings.Builder
		quoted := s[i] == '"'
		if quoted {
			i++
		}
		closed := !quoted
		for i < len(s) {
			c := s[i]
			if quoted && c == '"' {
				i++
				closed = true
				break
			}
			if !quoted && (c == ' ' || c == '\t') {
				break
			}
			if c == '\\' && i+1 < len(s) {
				if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
					if v := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0'); v <= 255 {
						b.WriteByte(byte(v))
						i += 4
						continue
					}
				}
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
		}
		if !closed {
			return nil, false
		}
		if quoted && i < len(s) && s[i] != ' ' && s[i] != '\t' {
			return nil, false // "a"b: a quote must end a string
		}
		out = append(out, SplitTXT(b.String())...)
	}
	return out, len(out) > 0
}

// FormatTXTStrings writes strings in presentation form: each quoted, '"'
// and '\' escaped by a backslash, bytes outside printable ASCII as \DDD,
// one space between.
func FormatTXTStrings(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(EscapeTXT(s))
		b.WriteByte('"')
	}
	return b.String()
}

// TXTData is the libdns form of a TXT record with strings ss: its text
// (plain true) when ss is that text cut by SplitTXT, else
// FormatTXTStrings(ss).
func TXTData(ss []string) (data string, plain bool) {
	joined := strings.Join(ss, "")
	if slices.Equal(ss, SplitTXT(joined)) {
		return joined, true
	}
	return FormatTXTStrings(ss), false
}

// CanonicalTXT returns TXT data as the zone reports it back: presentation
// form is parsed and written again (or, when its strings are one text cut
// at 255 bytes, that text); plain text is returned as is.
func CanonicalTXT(data string) string {
	if !IsTXTStrings(data) {
		return data
	}
	ss, ok := ParseTXTStrings(data)
	if !ok {
		return data
	}
	d, _ := TXTData(ss)
	return d
}

// EscapeTXT escapes one character-string as zone files and miekg/dns write
// it: a backslash before '"' and '\\', \DDD for bytes outside printable
// ASCII. A string that needs no escaping is returned as it is.
func EscapeTXT(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < ' ' || c > '~' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c > '~':
			b.WriteByte('\\')
			b.WriteByte('0' + c/100)
			b.WriteByte('0' + c/10%10)
			b.WriteByte('0' + c%10)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapeTXT reverses EscapeTXT (and the escaping miekg/dns applies to
// the TXT strings it unpacks): \DDD (three decimal digits, at most 255) is
// that byte, a backslash before any other byte is that byte, and a
// trailing lone backslash is kept.
func UnescapeTXT(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return string(AppendUnescapedTXT(make([]byte, 0, len(s)), s))
}

// AppendUnescapedTXT appends UnescapeTXT(s) to dst, for writers that
// build no string of it.
func AppendUnescapedTXT(dst []byte, s string) []byte {
	if !strings.Contains(s, `\`) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			if v := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0'); v <= 255 {
				dst = append(dst, byte(v))
				i += 3
				continue
			}
		}
		dst = append(dst, s[i+1])
		i++
	}
	return dst
}

// TXTInput returns the character-strings a TXT record written as r holds
// (unescaped): a libdns.TXT, or data not beginning with a double quote, is
// one text cut into 255-byte strings; other data is zone-file presentation
// form, several strings (an error when it does not parse).
func TXTInput(r libdns.Record) ([]string, error) {
	data := r.RR().Data
	switch r.(type) {
	case libdns.TXT, *libdns.TXT:
		return SplitTXT(data), nil
	}
	if !IsTXTStrings(data) {
		return SplitTXT(data), nil
	}
	ss, ok := ParseTXTStrings(data)
	if !ok {
		return nil, fmt.Errorf("TXT data %q is not zone-file presentation form (quoted strings separated by spaces)", data)
	}
	return ss, nil
}

// QuoteTXTStrings writes character-strings (each at most 255 bytes) as
// quoted strings separated by spaces, '"' and '\' escaped by a backslash
// and bytes outside printable ASCII escaped as e says. No string is cut or
// merged, so the strings read back are the strings written.
func QuoteTXTStrings(ss []string, e Escape) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteTXT(s, e))
	}
	return b.String()
}

// UnquoteTXTStrings splits presentation-form TXT data into its
// character-strings, unescaped as e says: each quoted string is one, an
// unquoted token is one. It never fails: malformed input splits to a best
// effort, never a panic.
func UnquoteTXTStrings(v string, e Escape) []string {
	var out []string
	for i := 0; i < len(v); {
		var b strings.Builder
		switch c := v[i]; {
		case c == ' ' || c == '\t':
			i++
			continue
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
		out = append(out, b.String())
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}
