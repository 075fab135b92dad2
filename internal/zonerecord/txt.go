package zonerecord

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// TXT records and their character-strings.
//
// libdns documents TXT.Text as one string. The zone keeps a TXT record's
// character-strings (RFC 1035 section 3.3.14) exactly, in two forms:
//
//   - libdns.TXT{Text: t} is the text t in 255-byte strings (one empty
//     string for ""), the way the rfc2136 adapter writes a long text.
//   - libdns.RR{Type: "TXT", Data: d} with d beginning with a double quote is
//     zone-file presentation form: quoted strings separated by spaces, with
//     \" \\ and \DDD escapes, e.g. `"first" "second"`. A string longer than
//     255 bytes is cut into 255-byte strings. Data not beginning with a
//     double quote is plain text, as with libdns.TXT (so write text that
//     itself begins with a double quote as a libdns.TXT).
//
// GetRecords and answer hooks return a TXT whose strings are its text cut
// into 255-byte strings as a libdns.TXT, any other as a libdns.RR in
// canonical presentation form (each string quoted, one space between), so
// a record read back and written again is the same record.

// txtInput returns the character-strings (raw bytes) of a TXT record given
// to the zone: in is the record as passed (libdns.TXT means plain text),
// data its RR().Data.
func txtInput(in libdns.Record, data string) ([]string, error) {
	switch in.(type) {
	case libdns.TXT, *libdns.TXT:
		return zoneops.SplitTXT(data), nil
	}
	if !zoneops.IsTXTStrings(data) {
		return zoneops.SplitTXT(data), nil
	}
	ss, ok := zoneops.ParseTXTStrings(data)
	if !ok {
		return nil, fmt.Errorf("%w: TXT data %q is not zone-file presentation form (quoted strings separated by spaces)", ErrInvalidRecord, data)
	}
	return ss, nil
}

// TXTData is the libdns Data the zone reports for strings ss: the text when
// ss is the text cut into 255-byte strings, else the presentation form.
func TXTData(ss []string) (data string, plain bool) { return zoneops.TXTData(ss) }

// TXTPresentation writes ss in zone-file presentation form.
func TXTPresentation(ss []string) string { return zoneops.FormatTXTStrings(ss) }

// MaxTXTData is the most bytes of text (its strings together) a TXT
// record may hold.
const MaxTXTData = 4000

// TXTWire returns ss escaped for miekg/dns, which reads backslash escapes
// when packing: a wire TXT record's Txt (TXTStrings reverses it).
func TXTWire(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = zoneops.EscapeTXT(s)
	}
	return out
}

// TXTStrings returns the raw character-strings of a wire TXT record.
func TXTStrings(t *dns.TXT) []string {
	out := make([]string, len(t.Txt))
	for i, s := range t.Txt {
		out[i] = zoneops.UnescapeTXT(s)
	}
	return out
}
