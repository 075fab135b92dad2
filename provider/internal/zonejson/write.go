package zonejson

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
)

// Write writes zones to w as the JSON of memory's Snapshot with the given
// format, version and epoch (epoch left out when empty): zones by name,
// each with its SOA and records in GetRecords order, the bytes json.Marshal
// writes for the Snapshot. keep, when not nil, leaves out the records for
// which it returns false. Each record is written from its wire form
// (Encoder), so a walk allocates little beyond each zone's sorted list of
// nodes (zonedata.SortedNodes, 16 bytes a name). Errors are w's.
func Write(w io.Writer, format int, version uint64, epoch string, zones map[string]*zonedata.Zone, keep func(zone string, r zonedata.Rec) bool) error {
	e := snapshotEncoder{w: w, buf: make([]byte, 0, 64<<10)}
	e.raw(`{"format":`)
	e.buf = strconv.AppendInt(e.buf, int64(format), 10)
	e.raw(`,"version":`)
	e.buf = strconv.AppendUint(e.buf, version, 10)
	if epoch != "" {
		e.raw(`,"epoch":`)
		e.buf = appendJSONString(e.buf, epoch)
	}
	e.raw(`,"zones":[`)
	names := make([]string, 0, len(zones))
	for n := range zones {
		names = append(names, n)
	}
	slices.Sort(names)
	var enc Encoder
	for i, name := range names {
		z := zones[name]
		if i > 0 {
			e.raw(",")
		}
		soa, _ := json.Marshal(z.SOA) // plain fields: never fails
		e.raw(`{"name":`)
		e.buf = appendJSONString(e.buf, z.Name)
		e.raw(`,"soa":`)
		e.buf = append(e.buf, soa...)
		e.raw(`,"records":[`)
		first := true
		for n := range zonedata.SortedNodes(z) {
			for _, r := range n.All() {
				if keep != nil && !keep(z.Name, r) {
					continue
				}
				if !first {
					e.raw(",")
				}
				first = false
				e.buf = enc.AppendRecord(e.buf, z.Name, r)
			}
			if err := e.flush(false); err != nil {
				return err
			}
		}
		e.raw("]}")
	}
	e.raw("]}")
	return e.flush(true)
}

// snapshotEncoder appends JSON to a buffer it writes out in large pieces.
type snapshotEncoder struct {
	w   io.Writer
	buf []byte
}

func (e *snapshotEncoder) raw(s string) { e.buf = append(e.buf, s...) }

func (e *snapshotEncoder) flush(all bool) error {
	if !all && len(e.buf) < cap(e.buf)/2 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it (HTML-safe escapes, invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped).
func appendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		// At most 4 bytes: converting them from []byte allocates nothing.
		c, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
