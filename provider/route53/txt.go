package route53

import (
	"strings"

	"github.com/gslbkit/gslb/internal/zoneops"
)

// encodeTXT writes text as Route 53 wants a TXT value: one or more quoted
// strings of at most 255 bytes each (longer ones are refused with
// TXTRDATATooLong), separated by spaces, with '"' and '\' escaped by a
// backslash and bytes outside printable ASCII as \ooo (three octal digits),
// as Route 53's documentation prescribes.
func encodeTXT(text string) string { return zoneops.QuoteTXTEscaped(text, zoneops.Octal) }

// decodeTXT reads a Route 53 TXT value back into the text it holds: the
// quoted strings joined without separators, escapes undone (\" \\ and
// \ooo octal; a backslash before any other byte is that byte). Unquoted
// tokens are taken as they are. It never fails: malformed input decodes to
// a best effort, never a panic.
func decodeTXT(v string) string { return zoneops.UnquoteTXTEscaped(v, zoneops.Octal) }

// encodeTXTStrings writes character-strings (each at most 255 bytes) as
// Route 53 wants a TXT value, one quoted string each, escaped as
// encodeTXT does.
func encodeTXTStrings(ss []string) string { return zoneops.QuoteTXTStrings(ss, zoneops.Octal) }

// decodeTXTStrings reads a Route 53 TXT value into its character-strings,
// escapes undone. It never fails.
func decodeTXTStrings(v string) []string { return zoneops.UnquoteTXTStrings(v, zoneops.Octal) }

// decodeName undoes Route 53's escapes in a record name (\052 for '*',
// octal for other special bytes) and lower-cases it. A name has no quotes
// or blanks, so it reads as one unquoted token.
func decodeName(n string) string {
	if !strings.Contains(n, `\`) {
		return strings.ToLower(n)
	}
	return strings.ToLower(zoneops.UnquoteTXTEscaped(n, zoneops.Octal))
}
