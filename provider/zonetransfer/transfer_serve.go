package zonetransfer

import (
	"encoding/binary"
	"errors"
	"io"
	"iter"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnswire"
	"github.com/miekg/dns"
)

// xfrMessageSize is the uncompressed size at which a transfer starts a new
// message (BIND's transfer-message-size default).
const xfrMessageSize = 20480

// xfrWriteTimeout bounds the writing of one transfer message when the
// writer has a write deadline (a net.Conn).
const xfrWriteTimeout = 30 * time.Second

// tsigFudge is the clock skew allowed on TSIG-signed messages, RFC 8945's
// recommended 300 seconds.
const tsigFudge = 300

// wants reports whether query is the Transfer's business: a transfer
// request (AXFR or IXFR) or a message carrying a TSIG record. It reads only
// the question's type and the additional records' types, so plain queries
// cost a short scan; what it cannot read quickly it claims (the slower path
// then parses the whole message and answers as the Provider would).
func wants(q []byte) bool {
	if len(q) < 12 || q[2]&0x80 != 0 {
		return false
	}
	qd := int(q[4])<<8 | int(q[5])
	an := int(q[6])<<8 | int(q[7])
	ns := int(q[8])<<8 | int(q[9])
	ar := int(q[10])<<8 | int(q[11])
	if qd != 1 {
		return false
	}
	off, ok := dnswire.SkipName(q, 12)
	if !ok || off+4 > len(q) {
		return false
	}
	if t := uint16(q[off])<<8 | uint16(q[off+1]); t == dns.TypeAXFR || t == dns.TypeIXFR {
		return true
	}
	if ar == 0 {
		return false
	}
	if an != 0 || ns != 0 {
		return true
	}
	off += 4
	for range ar {
		if off, ok = dnswire.SkipName(q, off); !ok || off+10 > len(q) {
			return true
		}
		if uint16(q[off])<<8|uint16(q[off+1]) == dns.TypeTSIG {
			return true
		}
		off += 10 + (int(q[off+8])<<8 | int(q[off+9]))
	}
	return false
}

// RespondUDP answers a UDP query as memory.Provider.RespondUDP does (the fast path,
// into buf), except that TSIG-signed queries are verified and answered
// signed, and an IXFR request allowed to transfer gets the zone's SOA alone
// (RFC 1995 section 2: the client then asks again over TCP, or stops if it
// holds that serial).
func (x *Transfer) RespondUDP(query, buf []byte, src netip.Addr) []byte {
	if x == nil || x.p == nil {
		return nil
	}
	if !wants(query) {
		return x.p.RespondUDP(query, buf, src)
	}
	return x.RespondWire(query, src, false)
}

// RespondWire answers one query as memory.Provider.RespondWire does, except for
// the Transfer's business: TSIG-signed queries are verified (a bad or
// unknown key gets NOTAUTH with the TSIG error, RFC 8945) and answered
// signed; over UDP an allowed IXFR request gets the SOA alone. Over TCP,
// call ServeTCP first: transfers are answered there, as a stream.
func (x *Transfer) RespondWire(query []byte, src netip.Addr, tcp bool) []byte {
	if x == nil || x.p == nil {
		return nil
	}
	if !wants(query) {
		return x.p.RespondWire(query, src, tcp)
	}
	req := new(dns.Msg)
	if err := req.Unpack(query); err != nil {
		return x.p.RespondWire(query, src, tcp)
	}
	out, _ := x.answer(req, query, src, tcp)
	return out
}

// answer builds the one-message reply to a non-streamed request.
func (x *Transfer) answer(req *dns.Msg, query []byte, src netip.Addr, tcp bool) ([]byte, *tsigKey) {
	if len(req.Question) != 1 {
		return x.p.RespondWire(query, src, tcp), nil
	}
	key, reqMAC, terr := x.verify(req, query)
	if terr != 0 {
		return x.tsigError(req, key, reqMAC, terr), nil
	}
	q := req.Question[0]
	if q.Qtype == dns.TypeIXFR && !tcp && q.Qclass == dns.ClassINET {
		z, rcode := x.transferable(req, src, key)
		if z == nil {
			return x.finish(x.errorReply(req, rcode), key, reqMAC), key
		}
		m := x.reply(req)
		m.Answer = []dns.RR{z}
		return x.finish(m, key, reqMAC), key
	}
	if key == nil {
		return x.p.RespondWire(query, src, tcp), nil
	}
	m := x.p.Respond(req, src, tcp)
	if m == nil {
		return nil, key
	}
	return x.finish(m, key, reqMAC), key
}

// finish packs m, signed with key when the request was signed.
func (x *Transfer) finish(m *dns.Msg, key *tsigKey, reqMAC string) []byte {
	if key == nil {
		out, err := m.Pack()
		if err != nil {
			return nil
		}
		return out
	}
	out, _, err := x.sign(m, key, reqMAC, false)
	if err != nil {
		return nil
	}
	return out
}

func (x *Transfer) sign(m *dns.Msg, key *tsigKey, mac string, timersOnly bool) ([]byte, string, error) {
	m.SetTsig(key.name, key.alg, tsigFudge, tsigNow())
	return dns.TsigGenerate(m, key.secret, mac, timersOnly)
}

// verify checks the request's TSIG, if any: it returns the key (nil for an
// unsigned request), the request's MAC, and a TSIG error code (0 when the
// request is unsigned or verified).
func (x *Transfer) verify(req *dns.Msg, query []byte) (*tsigKey, string, uint16) {
	t := req.IsTsig()
	if t == nil {
		return nil, "", 0
	}
	k, ok := x.keys[zoneKey(t.Hdr.Name)]
	if !ok || !strings.EqualFold(t.Algorithm, k.alg) {
		x.stats.badTSIG.Add(1)
		return nil, t.MAC, dns.RcodeBadKey
	}
	// TsigVerify writes the TSIG's original ID over the message's own, in
	// place: give it a copy, as the caller's buffer is not ours to change.
	if err := dns.TsigVerify(slices.Clone(query), k.secret, "", false); err != nil {
		x.stats.badTSIG.Add(1)
		if errors.Is(err, dns.ErrTime) {
			return &k, t.MAC, dns.RcodeBadTime
		}
		return nil, t.MAC, dns.RcodeBadSig
	}
	return &k, t.MAC, 0
}

// tsigError is the NOTAUTH reply to a request whose TSIG failed: unsigned
// for an unknown key or a bad MAC, signed for a bad time (RFC 8945 5.2).
func (x *Transfer) tsigError(req *dns.Msg, key *tsigKey, reqMAC string, code uint16) []byte {
	m := x.reply(req)
	m.Rcode = dns.RcodeNotAuth
	plain, err := m.Pack()
	if err != nil {
		return nil
	}
	t := req.IsTsig()
	alg := strings.ToLower(dns.Fqdn(t.Algorithm))
	if !slices.Contains(tsigAlgorithmNames, alg) {
		return plain // an algorithm we do not know: no TSIG to answer with
	}
	m.Extra = append(m.Extra, &dns.TSIG{
		Hdr:       dns.RR_Header{Name: strings.ToLower(t.Hdr.Name), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: alg, Fudge: tsigFudge, TimeSigned: uint64(tsigNow()), OrigId: req.Id, Error: code,
	})
	secret := ""
	if key != nil {
		secret = key.secret
	}
	out, _, err := dns.TsigGenerate(m, secret, reqMAC, false)
	if err != nil || new(dns.Msg).Unpack(out) != nil {
		return plain
	}
	return out
}

var tsigAlgorithmNames = []string{dns.HmacSHA256, dns.HmacSHA384, dns.HmacSHA512, dns.HmacSHA224, dns.HmacSHA1, dns.HmacMD5}

// reply starts a reply to req: same ID, opcode and question.
func (x *Transfer) reply(req *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.Id, m.Response, m.Opcode = req.Id, true, req.Opcode
	m.Question = req.Question
	m.Compress = true
	return m
}

func (x *Transfer) errorReply(req *dns.Msg, rcode int) *dns.Msg {
	m := x.reply(req)
	m.Rcode = rcode
	return m
}

// transferable returns the SOA of the zone a transfer request names when it is offered
// and the request is allowed, or the response code to refuse it with.
func (x *Transfer) transferable(req *dns.Msg, src netip.Addr, key *tsigKey) (*dns.SOA, int) {
	q := req.Question[0]
	name := zoneKey(q.Name)
	z, _ := x.p.SOARecord(name)
	keyName := ""
	if key != nil {
		keyName = key.name
	}
	switch {
	case z == nil || !x.offered(name):
		x.stats.refused.Add(1)
		x.log.Info("zone transfer refused: not a zone offered for transfer", "zone", name, "client", src, "key", keyName)
		return nil, dns.RcodeNotAuth
	case x.p.Signed(name) && !x.cfg.SignedUnsigned:
		x.stats.refused.Add(1)
		x.log.Warn("zone transfer refused: the zone is signed online and secondaries would serve it unsigned (TransferConfig.SignedUnsigned)", "zone", name, "client", src, "key", keyName)
		return nil, dns.RcodeRefused
	case !x.allowed(src, keyName):
		x.stats.refused.Add(1)
		x.log.Warn("zone transfer refused: not allowed", "zone", name, "client", src, "key", keyName)
		return nil, dns.RcodeRefused
	}
	return z, dns.RcodeSuccess
}

// ServeTCP handles one message read from a TCP connection when it is the
// Transfer's business (see RespondWire) and reports whether it did: it
// writes the reply, length-prefixed as on TCP, to w — for an AXFR or IXFR
// request, the whole transfer as a stream of messages, each signed when
// the request was. It returns false, writing nothing, for any other query
// (answer it with memory.Provider.RespondWire), and the write error that cut a
// reply short. When w has SetWriteDeadline (a net.Conn), each message gets
// 30 s to be written.
//
// pin, when not nil, is called once a transfer is allowed, before it is
// written (the DNS server keeps such a connection from being evicted).
func (x *Transfer) ServeTCP(w io.Writer, query []byte, src netip.Addr, pin func()) (bool, error) {
	if x == nil || x.p == nil {
		return false, ErrNoProvider
	}
	if !wants(query) {
		return false, nil
	}
	req := new(dns.Msg)
	if err := req.Unpack(query); err != nil || len(req.Question) != 1 {
		return false, nil
	}
	q := req.Question[0]
	if (q.Qtype != dns.TypeAXFR && q.Qtype != dns.TypeIXFR) || req.Opcode != dns.OpcodeQuery || q.Qclass != dns.ClassINET {
		out, _ := x.answer(req, query, src, true)
		if out == nil {
			return true, nil
		}
		return true, writeFramed(w, out)
	}
	start := time.Now()
	key, reqMAC, terr := x.verify(req, query)
	if terr != 0 {
		x.stats.refused.Add(1)
		x.log.Warn("zone transfer refused: TSIG failed", "zone", q.Name, "client", src, "tsigError", dns.RcodeToString[int(terr)])
		return true, writeFramed(w, x.tsigError(req, key, reqMAC, terr))
	}
	soa, rcode := x.transferable(req, src, key)
	if soa == nil {
		return true, writeFramed(w, x.finish(x.errorReply(req, rcode), key, reqMAC))
	}
	zoneName := zoneKey(soa.Hdr.Name)
	var client uint32
	ixfr := q.Qtype == dns.TypeIXFR
	if ixfr {
		soa, ok := ixfrSOA(req, zoneName)
		if !ok {
			x.stats.refused.Add(1)
			return true, writeFramed(w, x.finish(x.errorReply(req, dns.RcodeFormatError), key, reqMAC))
		}
		client = soa
	}
	if pin != nil {
		pin()
	}
	x.warnHooks(zoneName)
	z, err := OpenXFR(x.p, zoneName, ixfr, client)
	if err != nil { // removed since it was found
		x.stats.refused.Add(1)
		return true, writeFramed(w, x.finish(x.errorReply(req, dns.RcodeNotAuth), key, reqMAC))
	}
	kind := z.Kind
	switch kind {
	case XFRFull:
		x.stats.axfr.Add(1)
	case XFRIncremental:
		x.stats.ixfr.Add(1)
	case XFRUpToDate:
		x.stats.upToDate.Add(1)
	}
	n, msgs, bytes, err := x.stream(w, req, key, reqMAC, z.All())
	if err != nil {
		x.log.Warn("zone transfer cut short", "zone", z.Zone, "client", src, "err", err)
		return true, err
	}
	args := []any{"zone", z.Zone, "kind", kind.String(), "serial", z.Serial, "client", src,
		"records", n, "messages", msgs, "bytes", bytes, "duration", time.Since(start)}
	if ixfr {
		args = append(args, "fromSerial", client)
	}
	if key != nil {
		args = append(args, "key", key.name)
	}
	x.log.Info("zone transfer", args...)
	return true, nil
}

// ixfrSOA returns the serial of the SOA an IXFR request carries in its
// authority section for zone.
func ixfrSOA(req *dns.Msg, zone string) (uint32, bool) {
	for _, rr := range req.Ns {
		if soa, ok := rr.(*dns.SOA); ok && zoneKey(soa.Hdr.Name) == zone {
			return soa.Serial, true
		}
	}
	return 0, false
}

// stream writes rrs to w as a transfer's messages answering req, each
// holding records up to about xfrMessageSize bytes and written as soon as
// it is full (so the first goes out at once, and only one message's
// records are held at a time), signed with key when the request was
// (RFC 8945 section 5.3.1: the first with the request's MAC, the next
// ones with timers only). It returns the records, messages and bytes
// written, and the error that cut the transfer short.
func (x *Transfer) stream(w io.Writer, req *dns.Msg, key *tsigKey, mac string, rrs iter.Seq[dns.RR]) (records, msgs, bytes int, err error) {
	if key == nil {
		return x.streamUnsigned(w, req, rrs)
	}
	var answer []dns.RR
	var pack, frame []byte
	size := 0
	flush := func() error {
		m := new(dns.Msg)
		m.Id, m.Response, m.Authoritative, m.Opcode = req.Id, true, true, req.Opcode
		m.Question = req.Question
		m.Compress = true
		m.Answer = answer
		var out []byte
		var err error
		if key != nil {
			out, mac, err = x.sign(m, key, mac, msgs > 0)
		} else {
			out, err = m.PackBuffer(pack)
			pack = out[:cap(out)]
		}
		if err != nil {
			x.log.Error("zone transfer: packing a message failed", "zone", zoneKey(req.Question[0].Name), "err", err)
			return err
		}
		frame = append(frame[:0], byte(len(out)>>8), byte(len(out)))
		frame = append(frame, out...)
		if err := writeFramedRaw(w, frame); err != nil {
			return err
		}
		clear(answer) // let the records go
		answer, size = answer[:0], 0
		msgs++
		bytes += len(out)
		return nil
	}
	header := 12 + 4 + len(req.Question[0].Name) + 2
	for rr := range rrs {
		l := dns.Len(rr)
		if len(answer) > 0 && header+size+l > xfrMessageSize {
			if err := flush(); err != nil {
				return records, msgs, bytes, err
			}
		}
		answer = append(answer, rr)
		size += l
		records++
	}
	if len(answer) > 0 {
		if err := flush(); err != nil {
			return records, msgs, bytes, err
		}
	}
	return records, msgs, bytes, nil
}

// streamUnsigned is stream for an unsigned request: the messages packed
// by an xfrPacker, each up to xfrMessageSize bytes as packed (so holding
// at least the records a message packed by miekg/dns holds) unless one
// record alone is larger.
func (x *Transfer) streamUnsigned(w io.Writer, req *dns.Msg, rrs iter.Seq[dns.RR]) (records, msgs, bytes int, err error) {
	zone := zoneKey(req.Question[0].Name)
	p, err := newXFRPacker(req, zone)
	if err != nil {
		x.log.Error("zone transfer: packing a message failed", "zone", zone, "err", err)
		return 0, 0, 0, err
	}
	flush := func() error {
		frame := p.frame()
		if err := writeFramedRaw(w, frame); err != nil {
			return err
		}
		msgs++
		bytes += len(frame) - 2
		return nil
	}
	// Records are packed in batches, touched first: the loads of a
	// batch's records, names and data, independent of one another, then
	// wait on memory together rather than one after the other.
	var batch [xfrBatch]dns.RR
	n := 0
	packBatch := func() error {
		p.touch(batch[:n])
		for i, rr := range batch[:n] {
			batch[i] = nil
			ok, err := p.add(rr, xfrMessageSize)
			if err == nil && !ok {
				if err = flush(); err != nil {
					return err
				}
				_, err = p.add(rr, xfrMessageSize)
			}
			if err != nil {
				x.log.Error("zone transfer: packing a message failed", "zone", zone, "err", err)
				return err
			}
			records++
		}
		n = 0
		return nil
	}
	for rr := range rrs {
		batch[n] = rr
		if n++; n == xfrBatch {
			if err := packBatch(); err != nil {
				return records, msgs, bytes, err
			}
		}
	}
	if err := packBatch(); err != nil {
		return records, msgs, bytes, err
	}
	if p.count > 0 {
		if err := flush(); err != nil {
			return records, msgs, bytes, err
		}
	}
	return records, msgs, bytes, nil
}

// writeFramed writes b with its two-byte length.
func writeFramed(w io.Writer, b []byte) error {
	if b == nil {
		return nil
	}
	out := make([]byte, 2+len(b))
	binary.BigEndian.PutUint16(out, uint16(len(b)))
	copy(out[2:], b)
	return writeFramedRaw(w, out)
}

// writeFramedRaw writes frame, a message already length-prefixed, with
// writeFramed's deadline.
func writeFramedRaw(w io.Writer, frame []byte) error {
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		if err := d.SetWriteDeadline(time.Now().Add(xfrWriteTimeout)); err != nil {
			return err
		}
	}
	_, err := w.Write(frame)
	return err
}
