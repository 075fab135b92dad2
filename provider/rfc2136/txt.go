package rfc2136

import (
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// txtInput returns the wire strings of a TXT record written as r with data
// r.RR().Data: a libdns.TXT, or data not beginning with a double quote, is
// one text cut into 255-byte strings; other data is zone-file presentation
// form, several strings.
func txtInput(r libdns.Record, data string) ([]string, error) {
	switch r.(type) {
	case libdns.TXT, *libdns.TXT:
		return txtStrings(data), nil
	}
	if !zoneops.IsTXTStrings(data) {
		return txtStrings(data), nil
	}
	ss, ok := zoneops.ParseTXTStrings(data)
	if !ok {
		return nil, fmt.Errorf("TXT data %q is not zone-file presentation form (quoted strings separated by spaces)", data)
	}
	for i, s := range ss {
		ss[i] = escapeTXT(s)
	}
	return ss, nil
}

// maxTXTString is the longest character-string a TXT record holds on the
// wire (RFC 1035 section 3.3).
const maxTXTString = 255

// txtStrings splits text into wire character-strings of at most 255
// bytes and escapes each the way miekg/dns stores TXT strings (a
// backslash before '"' and '\', \DDD for bytes outside printable ASCII),
// so packing writes the bytes of text exactly. The empty text is one empty
// string.
func txtStrings(text string) []string {
	if text == "" {
		return []string{""}
	}
	var out []string
	for len(text) > 0 {
		n := min(len(text), maxTXTString)
		out = append(out, escapeTXT(text[:n]))
		text = text[n:]
	}
	return out
}

// escapeTXT escapes s for a miekg/dns TXT string.
func escapeTXT(s string) string {
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

// unescapeTXT reverses the escaping miekg/dns applies to TXT strings it
// unpacks: \DDD (three decimal digits, at most 255) is that byte, a
// backslash before any other byte is that byte, and a trailing lone
// backslash is kept.
func unescapeTXT(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			v := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0')
			if v <= 255 {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// joinTXT returns the text of a TXT record read from the wire.
func joinTXT(ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(unescapeTXT(s))
	}
	return b.String()
}
