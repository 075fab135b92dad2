package probe

import (
	"bufio"
	"bytes"
	"strconv"
)

// httpProtocolError is a reply the lean engine could not parse. Both
// engines classify such replies as Fail with KindProtocol.
type httpProtocolError struct{ msg string }

func (e *httpProtocolError) Error() string { return "malformed HTTP response: " + e.msg }

func httpMalformed(msg string) error { return &httpProtocolError{msg: msg} }

// readLine reads one line without its "\n" or "\r\n", as net/textproto does
// (a last line without a line end is returned at EOF). With lim ≥ 0 a
// longer line is an error. The result may point into the reader's buffer:
// use it before the next read.
func (st *httpLeanState) readLine(br *bufio.Reader, lim int) ([]byte, error) {
	started := false
	for {
		l, more, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		if st.budget -= len(l) + 2; st.budget < 0 {
			return nil, httpMalformed("response header too large")
		}
		if lim >= 0 && len(st.line)*boolInt(started)+len(l) > lim {
			return nil, httpMalformed("line too long")
		}
		if !started && !more {
			return l, nil
		}
		if !started {
			st.line = st.line[:0]
			started = true
		}
		st.line = append(st.line, l...)
		if !more {
			return st.line, nil
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// httpParseStatusLine parses "HTTP/1.1 200 OK" as net/http does: a space
// after the version, a three-character code (strconv.Atoi rules, not
// negative), a version HTTP/x.y of single digits.
func httpParseStatusLine(line []byte) (code, major, minor int, err error) {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return 0, 0, 0, httpMalformed("status line without a space")
	}
	proto, status := line[:sp], bytes.TrimLeft(line[sp+1:], " ")
	if i := bytes.IndexByte(status, ' '); i >= 0 {
		status = status[:i]
	}
	if len(status) != 3 {
		return 0, 0, 0, httpMalformed("status code not three characters")
	}
	code, ok := httpAtoi3(status)
	if !ok || code < 0 {
		return 0, 0, 0, httpMalformed("bad status code")
	}
	if major, minor, ok = httpParseVersion(proto); !ok {
		return 0, 0, 0, httpMalformed("bad HTTP version")
	}
	return code, major, minor, nil
}

// httpAtoi3 is strconv.Atoi for three bytes: an optional sign, then digits.
func httpAtoi3(s []byte) (int, bool) {
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// httpParseVersion accepts "HTTP/x.y" with single digits.
func httpParseVersion(v []byte) (major, minor int, ok bool) {
	if len(v) != len("HTTP/1.1") || string(v[:5]) != "HTTP/" || v[6] != '.' {
		return 0, 0, false
	}
	if v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9' {
		return 0, 0, false
	}
	return int(v[5] - '0'), int(v[7] - '0'), true
}

// httpHeaderInfo is what a verdict needs from the headers.
type httpHeaderInfo struct {
	clCount     int  // Content-Length fields
	clMismatch  bool // Content-Length fields that differ
	teCount     int  // Transfer-Encoding fields
	teChunked   bool // the first one is "chunked"
	trailer     bool // a Trailer field is present
	trailerBad  bool // it names Content-Length, Transfer-Encoding or Trailer
	connUpgrade bool // Connection holds the token "upgrade"
	connClose   bool // Connection holds the token "close"
	upgrade     bool // the first Upgrade field is not empty
	upgradeSeen bool
}

// readHeader reads header fields up to the blank line, validating each as
// net/textproto.ReadMIMEHeader does. With trailer set it only validates.
func (st *httpLeanState) readHeader(trailer bool) error {
	br := st.br
	if b, err := br.Peek(1); err == nil && (b[0] == ' ' || b[0] == '\t') {
		if _, err := st.readLine(br, 80); err != nil {
			return err
		}
		return httpMalformed("header starts with white space")
	}
	for {
		kv, err := st.readContinued(br)
		if len(kv) == 0 {
			return err
		}
		k, v, _ := bytes.Cut(kv, []byte{':'})
		canon, ok := httpCheckKey(k)
		if !ok {
			return httpMalformed("bad header name")
		}
		for _, c := range v {
			if !httpValueByte(c) {
				return httpMalformed("bad header value")
			}
		}
		if trailer || !canon {
			continue
		}
		v = bytes.TrimLeft(v, " \t")
		st.hdr.note(st, k, v)
	}
}

// readContinued reads a field line and its obsolete continuation lines,
// joined by single spaces, trimmed. A blank line returns an empty slice.
func (st *httpLeanState) readContinued(br *bufio.Reader) ([]byte, error) {
	line, err := st.readLine(br, -1)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return line, nil
	}
	if bytes.IndexByte(line, ':') < 0 {
		return nil, httpMalformed("header line without a colon")
	}
	if br.Buffered() > 0 {
		if b, _ := br.Peek(1); b[0] != ' ' && b[0] != '\t' {
			return httpTrim(line), nil // the common case: no copy
		}
	}
	st.cont = append(st.cont[:0], httpTrim(line)...)
	for httpSkipSpace(br) > 0 {
		st.cont = append(st.cont, ' ')
		line, err := st.readLine(br, -1)
		if err != nil {
			break
		}
		st.cont = append(st.cont, httpTrim(line)...)
	}
	return st.cont, nil
}

func httpSkipSpace(br *bufio.Reader) int {
	n := 0
	for {
		c, err := br.ReadByte()
		if err != nil {
			return n
		}
		if c != ' ' && c != '\t' {
			_ = br.UnreadByte()
			return n
		}
		n++
	}
}

func httpTrim(s []byte) []byte { return bytes.Trim(s, " \t") }

// httpCheckKey accepts a non-empty field name of token bytes; spaces are
// tolerated but such a name is never canonical (it matches no known field).
func httpCheckKey(k []byte) (canon, ok bool) {
	if len(k) == 0 {
		return false, false
	}
	canon = true
	for _, c := range k {
		switch {
		case httpTokenByte(c):
		case c == ' ':
			canon = false
		default:
			return false, false
		}
	}
	return canon, true
}

// httpTokenByte reports whether c may appear in a token (RFC 9110).
func httpTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// httpValueByte reports whether c may appear in a field value: visible
// ASCII, space, tab, and obs-text (≥ 0x80).
func httpValueByte(c byte) bool {
	return c == '\t' || (c >= 0x20 && c != 0x7f)
}

// note records the fields a verdict depends on.
func (hi *httpHeaderInfo) note(st *httpLeanState, k, v []byte) {
	switch {
	case httpEqualFold(k, "Content-Length"):
		t := httpTrimSpace(v)
		if hi.clCount == 0 {
			st.first = append(st.first[:0], t...)
		} else if !bytes.Equal(t, st.first) {
			hi.clMismatch = true
		}
		hi.clCount++
	case httpEqualFold(k, "Transfer-Encoding"):
		if hi.teCount == 0 {
			hi.teChunked = httpEqualFold(v, "chunked")
		}
		hi.teCount++
	case httpEqualFold(k, "Trailer"):
		hi.trailer = true
		httpEachElement(v, func(e []byte) {
			if httpIsToken(e) && (httpEqualFold(e, "Content-Length") || httpEqualFold(e, "Transfer-Encoding") || httpEqualFold(e, "Trailer")) {
				hi.trailerBad = true
			}
		})
	case httpEqualFold(k, "Connection"):
		httpEachToken(v, func(e []byte) {
			if httpEqualFold(e, "upgrade") {
				hi.connUpgrade = true
			}
			if httpEqualFold(e, "close") {
				hi.connClose = true
			}
		})
	case httpEqualFold(k, "Upgrade"):
		if !hi.upgradeSeen {
			hi.upgradeSeen, hi.upgrade = true, len(v) > 0
		}
	}
}

// transfer works out the body as net/http's readTransfer does. first is
// the first Content-Length value, trimmed.
func (hi *httpHeaderInfo) transfer(first []byte, code, major, minor int, head bool) (httpBodyKind, int64, error) {
	chunked := false
	if hi.teCount > 0 && (major > 1 || major == 1 && minor >= 1) {
		if hi.teCount != 1 || !hi.teChunked {
			return 0, 0, httpMalformed("unsupported transfer encoding")
		}
		chunked = true
	}
	var n int64
	if hi.clCount > 0 {
		if hi.clMismatch {
			return 0, 0, httpMalformed("differing Content-Length fields")
		}
		if len(first) == 0 {
			return 0, 0, httpMalformed("empty Content-Length")
		}
		u, err := strconv.ParseUint(string(first), 10, 63)
		if err != nil {
			return 0, 0, httpMalformed("bad Content-Length")
		}
		n = int64(u)
	}
	if hi.trailer && chunked && hi.trailerBad {
		return 0, 0, httpMalformed("bad Trailer field")
	}
	bodyAllowed := !(code >= 100 && code <= 199 || code == 204 || code == 304)
	// net/http drops a Connection field holding "close" from HTTP/1.1 and
	// later responses, and with it the "upgrade" token.
	connUpgrade := hi.connUpgrade && !(hi.connClose && major >= 1 && !(major == 1 && minor == 0))
	switch {
	case code == 101 && hi.upgrade && connUpgrade:
		return httpBodyEOF, 0, nil // a protocol switch: the rest is the body
	case head || !bodyAllowed:
		return httpBodyNone, 0, nil
	case chunked:
		return httpBodyChunked, 0, nil
	case hi.clCount > 0 && n == 0:
		return httpBodyNone, 0, nil
	case hi.clCount > 0:
		return httpBodyLength, n, nil
	}
	return httpBodyEOF, 0, nil
}

// httpEqualFold compares ASCII case-insensitively.
func httpEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// httpTrimSpace trims ASCII space, tab, CR and LF (textproto.TrimString).
func httpTrimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// httpIsToken reports whether every byte of b is a token byte.
func httpIsToken(b []byte) bool {
	for _, c := range b {
		if !httpTokenByte(c) {
			return false
		}
	}
	return true
}

// httpEachElement calls f for each non-empty, trimmed comma-separated element.
func httpEachElement(v []byte, f func([]byte)) {
	for len(v) > 0 {
		var e []byte
		e, v, _ = bytes.Cut(v, []byte{','})
		if e = httpTrimSpace(e); len(e) > 0 {
			f(e)
		}
	}
}

// httpEachToken calls f for each comma-separated element trimmed of spaces
// and tabs, empty ones included (httpguts.HeaderValuesContainsToken).
func httpEachToken(v []byte, f func([]byte)) {
	for {
		e, rest, found := bytes.Cut(v, []byte{','})
		f(bytes.Trim(e, " \t"))
		if !found {
			return
		}
		v = rest
	}
}
