package memory

import (
	"bytes"
	"errors"
	"net/netip"
	"strconv"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// A faster reader of plain zone files. miekg/dns's zone parser was about
// half of the CPU of loading a large zone, with some ten allocations per
// record. fastSource reads only the plainest lines — an owner in the first
// column, an optional TTL in digits, an optional IN, a type among SOA, A,
// AAAA, CNAME, NS and TXT in capitals, data without escapes, one record per
// line, no comments, no parentheses; $ORIGIN with a fully qualified plain
// name and $TTL in digits — and gives up (bail) at the first line that is
// anything else: ReadZoneFile then forgets what it read and reads the file
// again from the start with the parser. FuzzReadZoneFileFast checks that
// both give the same zone, or the same error, on every input.

// fastZoneFiles turns the fast reader on (tests compare both ways).
var fastZoneFiles = true

// maxFastZoneFile is the largest zone file read into memory for the fast
// reader; a larger one is parsed as it streams in.
const maxFastZoneFile = 1 << 30

var errBail = errors.New("memory: not a plain zone file line")

type fastSource struct {
	data   []byte
	pos    int
	lines  int // lines read
	origin string
	defTTL uint32
	hasTTL bool // defTTL set
	byDir  bool // by $TTL
	bail   bool
	// The last owner's token and name, shared by a run of its records.
	lastTok []byte
	lastOwn string
}

func (f *fastSource) line() int { return max(f.lines, 1) }
func (f *fastSource) err() error {
	if f.bail {
		return errBail
	}
	return nil
}

func (f *fastSource) giveUp() (dns.RR, bool) {
	f.bail = true
	return nil, false
}

// next returns the next record, false at the end or when bailing.
func (f *fastSource) next() (dns.RR, bool) {
	for f.pos < len(f.data) {
		end := bytes.IndexByte(f.data[f.pos:], '\n')
		var ln []byte
		if end < 0 {
			ln = f.data[f.pos:]
			f.pos = len(f.data)
		} else {
			ln = f.data[f.pos : f.pos+end]
			f.pos += end + 1
		}
		f.lines++
		if len(ln) == 0 {
			continue
		}
		var tok [12][]byte
		n := 0
		for i := 0; i < len(ln); {
			c := ln[i]
			if c == ' ' || c == '\t' {
				i++
				continue
			}
			if n == len(tok) {
				return f.giveUp()
			}
			j := i
			if c == '"' { // a quoted string: plain bytes only
				j++
				for j < len(ln) && ln[j] != '"' {
					if b := ln[j]; b < ' ' || b > '~' || b == '\\' {
						return f.giveUp()
					}
					j++
				}
				if j == len(ln) {
					return f.giveUp()
				}
				j++
				if j < len(ln) && ln[j] != ' ' && ln[j] != '\t' {
					return f.giveUp()
				}
			} else {
				for j < len(ln) && ln[j] != ' ' && ln[j] != '\t' {
					if b := ln[j]; b < '!' || b > '~' || b == '\\' || b == ';' || b == '(' || b == ')' || b == '"' {
						return f.giveUp()
					}
					j++
				}
			}
			tok[n] = ln[i:j]
			n++
			i = j
		}
		if n == 0 || ln[0] == ' ' || ln[0] == '\t' {
			return f.giveUp() // blank lines with spaces, or a blank owner
		}
		if rr, ok := f.record(tok[:n]); ok {
			return rr, true
		}
		if f.bail {
			return nil, false
		}
	}
	return nil, false
}

// record reads one line's tokens: a record (true), a directive (false,
// not bailing), or anything else (bail).
func (f *fastSource) record(t [][]byte) (dns.RR, bool) {
	switch string(t[0]) {
	case "$ORIGIN":
		if len(t) != 2 || !plainName(string(t[1])) || t[1][len(t[1])-1] != '.' {
			return f.giveUp()
		}
		if _, ok := dns.IsDomainName(string(t[1])); !ok {
			return f.giveUp()
		}
		f.origin, f.lastTok = string(t[1]), nil
		return nil, false
	case "$TTL":
		ttl, ok := digits(t, 1)
		if len(t) != 2 || !ok {
			return f.giveUp()
		}
		f.defTTL, f.hasTTL, f.byDir = ttl, true, true
		return nil, false
	}
	owner, ok := f.name(t[0], true)
	if !ok {
		return f.giveUp()
	}
	i := 1
	ttl, explicit := digits(t, i)
	if explicit {
		i++
	}
	if i < len(t) && string(t[i]) == "IN" {
		i++
	}
	if i >= len(t) {
		return f.giveUp()
	}
	typ := string(t[i])
	data := t[i+1:]
	if !explicit {
		if !f.hasTTL {
			return f.giveUp()
		}
		ttl = f.defTTL
	} else if !f.byDir {
		f.defTTL, f.hasTTL = ttl, true
	}
	hdr := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: ttl}
	switch typ {
	case "A", "AAAA":
		if len(data) != 1 {
			return f.giveUp()
		}
		ip, err := netip.ParseAddr(string(data[0]))
		if err != nil || ip.Zone() != "" {
			return f.giveUp()
		}
		if typ == "A" {
			if !ip.Is4() {
				return f.giveUp()
			}
			hdr.Rrtype = dns.TypeA
			return zonedata.NewA(hdr, ip.As4()), true
		}
		if !ip.Is6() || bytes.IndexByte(data[0], ':') < 0 {
			return f.giveUp()
		}
		hdr.Rrtype = dns.TypeAAAA
		return zonedata.NewAAAA(hdr, ip.As16()), true
	case "CNAME", "NS":
		if len(data) != 1 {
			return f.giveUp()
		}
		target, ok := f.name(data[0], false)
		if !ok {
			return f.giveUp()
		}
		if typ == "NS" {
			hdr.Rrtype = dns.TypeNS
			return &dns.NS{Hdr: hdr, Ns: target}, true
		}
		hdr.Rrtype = dns.TypeCNAME
		return &dns.CNAME{Hdr: hdr, Target: target}, true
	case "TXT":
		if len(data) == 0 {
			return f.giveUp()
		}
		for _, d := range data {
			if len(d) < 2 || d[0] != '"' || len(d) > 257 {
				return f.giveUp()
			}
		}
		hdr.Rrtype = dns.TypeTXT
		t := zonedata.NewTXT(hdr, len(data))
		for k, d := range data {
			t.Txt[k] = string(d[1 : len(d)-1])
		}
		return t, true
	case "SOA":
		if len(data) != 7 {
			return f.giveUp()
		}
		ns, ok1 := f.name(data[0], false)
		mbox, ok2 := f.name(data[1], false)
		serial, err := strconv.ParseUint(string(data[2]), 10, 32)
		if !ok1 || !ok2 || err != nil || !allDigits(data[2]) {
			return f.giveUp()
		}
		var v [4]uint32
		for k := range v {
			x, ok := digits(data, 3+k)
			if !ok {
				return f.giveUp()
			}
			v[k] = x
		}
		hdr.Rrtype = dns.TypeSOA
		return &dns.SOA{Hdr: hdr, Ns: ns, Mbox: mbox, Serial: uint32(serial), Refresh: v[0], Retry: v[1], Expire: v[2], Minttl: v[3]}, true
	}
	return f.giveUp()
}

// name reads a plain name: "@", fully qualified, or relative to the
// origin; an owner's string is shared with the line before's when the
// token is the same.
func (f *fastSource) name(tok []byte, owner bool) (string, bool) {
	if owner && f.lastTok != nil && bytes.Equal(tok, f.lastTok) {
		return f.lastOwn, true
	}
	var s string
	switch {
	case len(tok) == 1 && tok[0] == '@':
		s = f.origin
	case !plainName(string(tok)) || len(tok) == 0 || tok[0] == '.' && len(tok) > 1:
		return "", false
	case tok[len(tok)-1] == '.':
		s = string(tok)
	default:
		s = string(tok) + "." + f.origin
		if f.origin == "." {
			s = string(tok) + "."
		}
	}
	if _, ok := dns.IsDomainName(s); !ok || len(s) > 255 {
		return "", false
	}
	if owner {
		f.lastTok, f.lastOwn = tok, s
	}
	return s, true
}

// digits reads t[i] as a TTL in plain digits (at most 9: no overflow).
func digits(t [][]byte, i int) (uint32, bool) {
	if i >= len(t) || len(t[i]) == 0 || len(t[i]) > 9 || !allDigits(t[i]) {
		return 0, false
	}
	v, _ := strconv.Atoi(string(t[i]))
	return uint32(v), true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
