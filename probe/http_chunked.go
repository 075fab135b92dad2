package probe

import (
	"bufio"
	"bytes"
	"io"
)

// readChunked decodes a chunked body into feed until feed reports the
// verdict decided or the last chunk and trailer are read, following
// net/http's chunked reader and trailer rules.
func (st *httpLeanState) readChunked(feed func([]byte) bool) (bool, error) {
	br := st.br
	var excess int64
	for {
		p, err := br.ReadSlice('\n')
		switch err {
		case nil:
		case io.EOF:
			return false, io.ErrUnexpectedEOF
		case bufio.ErrBufferFull:
			return false, httpMalformed("chunk line too long")
		default:
			return false, err
		}
		if i := bytes.IndexByte(p, '\r'); i == -1 {
			return false, httpMalformed("chunk line ends with bare LF")
		} else if i != len(p)-2 {
			return false, httpMalformed("CR in chunk line")
		}
		p = p[:len(p)-2]
		if len(p) >= httpLeanBufSize {
			return false, httpMalformed("chunk line too long")
		}
		excess += int64(len(p)) + 2
		p = bytes.TrimRight(p, " \t")
		if i := bytes.IndexByte(p, ';'); i >= 0 {
			p = p[:i]
		}
		n, ok := httpParseHex(p)
		if !ok {
			return false, httpMalformed("bad chunk size")
		}
		excess -= 16 + (2 * int64(n))
		excess = max(excess, 0)
		if excess > 16*1024 {
			return false, httpMalformed("too much chunk overhead")
		}
		if n == 0 {
			if err := st.readTrailer(); err != nil {
				return false, err
			}
			return false, nil
		}
		for n > 0 {
			buf := st.body
			if uint64(len(buf)) > n {
				buf = buf[:n]
			}
			k, err := br.Read(buf)
			n -= uint64(k)
			if feed(buf[:k]) {
				return st.m.done(), nil
			}
			if err == io.EOF {
				return false, io.ErrUnexpectedEOF
			}
			if err != nil {
				return false, err
			}
		}
		var crlf [2]byte
		if _, err := io.ReadFull(br, crlf[:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return false, err
		}
		if crlf != [2]byte{'\r', '\n'} {
			return false, httpMalformed("chunk data not followed by CRLF")
		}
	}
}

// httpParseHex parses a chunk size: 1–16 hex digits.
func httpParseHex(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 16 {
		return 0, false
	}
	var n uint64
	for _, b := range v {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			b = b - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(b)
	}
	return n, true
}

// readTrailer reads the trailer after the last chunk as net/http does: a
// bare CRLF, or fields ending in a blank line that must fit the buffer.
func (st *httpLeanState) readTrailer() error {
	br := st.br
	b, err := br.Peek(2)
	if len(b) == 2 && b[0] == '\r' && b[1] == '\n' {
		_, _ = br.Discard(2)
		return nil
	}
	if len(b) < 2 {
		return httpMalformed("unexpected end of trailer")
	}
	if err != nil {
		return err
	}
	if !httpSeeDoubleCRLF(br) {
		return httpMalformed("trailer too long")
	}
	st.budget = httpMaxHeaderBytes // the trailer fits the buffer anyway
	if err := st.readHeader(true); err != nil {
		if err == io.EOF {
			return httpMalformed("unexpected end of trailer")
		}
		return err
	}
	return nil
}

// httpSeeDoubleCRLF reports whether a blank line is in the buffer ahead.
func httpSeeDoubleCRLF(br *bufio.Reader) bool {
	for n := 4; ; n++ {
		b, err := br.Peek(n)
		if bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
