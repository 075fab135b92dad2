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
		ss[i] = zoneops.EscapeTXT(s)
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
		out = append(out, zoneops.EscapeTXT(text[:n]))
		text = text[n:]
	}
	return out
}

// joinTXT returns the text of a TXT record read from the wire.
func joinTXT(ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(zoneops.UnescapeTXT(s))
	}
	return b.String()
}
