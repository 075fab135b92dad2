package replication

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gslbkit/gslb/provider/memory"
)

// ErrTooLarge is wrapped by the error of a read that stopped at its size
// limit (ReplicaConfig.MaxBody): the rest was not read.
var ErrTooLarge = errors.New("replication: larger than the limit")

// limitReader reads from r until n bytes have been read, then fails with
// ErrTooLarge instead of reading on: unlike io.LimitReader, the caller can
// tell a body that ends at the limit from one that goes beyond it.
type limitReader struct {
	r     io.Reader
	n     int64 // bytes still allowed
	limit int64
	err   error // the first error of r other than io.EOF
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One byte more tells whether the body goes on.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, l.limit)
		}
		l.note(err)
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	l.note(err)
	return n, err
}

func (l *limitReader) note(err error) {
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
}

// The decoders below walk the JSON token by token and decode one record or
// change at a time, so a body is never held whole in memory beside what it
// decodes to (a json.Decoder's Decode would buffer the whole value).

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
}

// objectKeys walks an object, calling each with the decoder positioned at
// the key's value; each must consume it.
func objectKeys(dec *json.Decoder, each func(key string) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("want an object key, got %v", t)
		}
		if err := each(key); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return expectDelim(dec, '}')
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

func arrayItems(dec *json.Decoder, each func(i int) error) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		if err := each(i); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return expectDelim(dec, ']')
}

// snapshotSink receives a snapshot as it is decoded: each zone once its
// name and SOA are read, then its records one by one. A builder sink
// builds the copy as the body streams in; a collecting sink makes a
// memory.Snapshot (ParseSnapshot).
type snapshotSink interface {
	zone(name string, soa memory.SOA) error
	record(r memory.ZoneRecord) error
}

// snapshotHead is a snapshot's fields other than its zones.
type snapshotHead struct {
	Format   int
	Version  uint64
	Epoch    string
	sawZones bool
}

// builderSink builds the zones into a memory.SnapshotBuilder.
type builderSink struct{ b *memory.SnapshotBuilder }

func (s builderSink) zone(name string, soa memory.SOA) error { return s.b.Zone(name, soa) }
func (s builderSink) record(r memory.ZoneRecord) error       { return s.b.Add(r) }

// collectSink collects the zones into a memory.Snapshot.
type collectSink struct{ s *memory.Snapshot }

func (c collectSink) zone(name string, soa memory.SOA) error {
	c.s.Zones = append(c.s.Zones, memory.ZoneSnapshot{Name: name, SOA: soa, Records: []memory.ZoneRecord{}})
	return nil
}

func (c collectSink) record(r memory.ZoneRecord) error {
	z := &c.s.Zones[len(c.s.Zones)-1]
	z.Records = append(z.Records, r)
	return nil
}

// decodeSnapshot decodes a snapshot object into h and sink, one record at
// a time.
func decodeSnapshot(dec *json.Decoder, h *snapshotHead, sink snapshotSink) error {
	return objectKeys(dec, func(key string) error {
		switch key {
		case "format":
			return dec.Decode(&h.Format)
		case "version":
			return dec.Decode(&h.Version)
		case "epoch":
			return dec.Decode(&h.Epoch)
		case "zones":
			h.sawZones = true
			return arrayItems(dec, func(int) error { return decodeZone(dec, sink) })
		}
		return skipValue(dec)
	})
}

// decodeZone decodes one zone object into sink. The zone starts once its
// name and SOA are read (a writer here puts them first); records that come
// before them are held until then.
func decodeZone(dec *json.Decoder, sink snapshotSink) error {
	var (
		name             string
		soa              memory.SOA
		haveName, hasSOA bool
		started          bool
		early            []memory.ZoneRecord
	)
	start := func() error {
		started = true
		if err := sink.zone(name, soa); err != nil {
			return err
		}
		for _, r := range early {
			if err := sink.record(r); err != nil {
				return err
			}
		}
		early = nil
		return nil
	}
	err := objectKeys(dec, func(key string) error {
		switch key {
		case "name":
			if started {
				return errors.New("the zone's name again")
			}
			if err := dec.Decode(&name); err != nil {
				return err
			}
			haveName = true
		case "soa":
			if started {
				return errors.New("the zone's SOA again")
			}
			if err := dec.Decode(&soa); err != nil {
				return err
			}
			hasSOA = true
		case "records":
			return arrayItems(dec, func(int) error {
				var r memory.ZoneRecord
				if err := dec.Decode(&r); err != nil {
					return err
				}
				if started {
					return sink.record(r)
				}
				early = append(early, r)
				return nil
			})
		default:
			return skipValue(dec)
		}
		if haveName && hasSOA {
			return start()
		}
		return nil
	})
	if err == nil && !started {
		err = start()
	}
	return err
}

// decodeChangesTo decodes a changes response; a full response's snapshot
// goes to sink when it is not nil, else to b when b is not nil (c.Snapshot
// then holds its head and no zones; b still gets the version and epoch),
// else to c.Snapshot.
func decodeChangesTo(dec *json.Decoder, c *ChangesResponse, b *memory.SnapshotBuilder, to snapshotSink) error {
	return objectKeys(dec, func(key string) error {
		switch key {
		case "format":
			return dec.Decode(&c.Format)
		case "version":
			return dec.Decode(&c.Version)
		case "epoch":
			return dec.Decode(&c.Epoch)
		case "full":
			return dec.Decode(&c.Full)
		case "changes":
			c.Changes = []memory.Change{}
			return arrayItems(dec, func(int) error {
				var ch memory.Change
				if err := dec.Decode(&ch); err != nil {
					return err
				}
				c.Changes = append(c.Changes, ch)
				return nil
			})
		case "snapshot":
			s := new(memory.Snapshot)
			var h snapshotHead
			var sink snapshotSink = collectSink{s}
			if b != nil {
				sink = builderSink{b}
			}
			if to != nil {
				sink = to
			}
			if err := decodeSnapshot(dec, &h, sink); err != nil {
				return err
			}
			if !h.sawZones {
				return errors.New("a snapshot without zones")
			}
			s.Format, s.Version, s.Epoch = h.Format, h.Version, h.Epoch
			if s.Zones == nil {
				s.Zones = []memory.ZoneSnapshot{}
			}
			if b != nil {
				b.Version, b.Epoch = h.Version, h.Epoch
			}
			c.Snapshot = s
			return nil
		}
		return skipValue(dec)
	})
}

// decodeWhole runs decode over r and checks that only white space follows.
func decodeWhole(r io.Reader, decode func(*json.Decoder) error) error {
	dec := json.NewDecoder(r)
	if err := decode(dec); err != nil {
		return err
	}
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("data after the end of the value")
	default:
		return err
	}
}

// readSnapshot decodes a snapshot from r into sink; it checks the shape
// only (the builder or memory.Provider.Restore validates the records).
func readSnapshot(r io.Reader, sink snapshotSink) (snapshotHead, error) {
	var h snapshotHead
	if err := decodeWhole(r, func(dec *json.Decoder) error { return decodeSnapshot(dec, &h, sink) }); err != nil {
		return h, fmt.Errorf("replication: parsing snapshot: %w", err)
	}
	if !h.sawZones {
		return h, errors.New("replication: parsing snapshot: no zones field")
	}
	if h.Format > memory.ReplicationFormat {
		return h, fmt.Errorf("replication: parsing snapshot: format %d is newer than this reader's %d", h.Format, memory.ReplicationFormat)
	}
	return h, nil
}

// readSnapshotInto decodes a snapshot from r into b, building the copy as
// it reads.
func readSnapshotInto(r io.Reader, b *memory.SnapshotBuilder) error {
	h, err := readSnapshot(r, builderSink{b})
	b.Version, b.Epoch = h.Version, h.Epoch
	return err
}

// readChanges decodes a changes response from r; a full response's
// snapshot is built into b when b is not nil (see decodeChangesTo).
func readChanges(r io.Reader, b *memory.SnapshotBuilder) (ChangesResponse, error) {
	return readChangesTo(r, b, nil)
}

// readChangesTo is readChanges with a full response's zones going to sink
// when it is not nil.
func readChangesTo(r io.Reader, b *memory.SnapshotBuilder, sink snapshotSink) (ChangesResponse, error) {
	var c ChangesResponse
	if err := decodeWhole(r, func(dec *json.Decoder) error { return decodeChangesTo(dec, &c, b, sink) }); err != nil {
		return ChangesResponse{}, fmt.Errorf("replication: parsing changes: %w", err)
	}
	if c.Format > memory.ReplicationFormat {
		return ChangesResponse{}, fmt.Errorf("replication: parsing changes: format %d is newer than this reader's %d", c.Format, memory.ReplicationFormat)
	}
	if c.Full {
		if c.Snapshot == nil {
			return ChangesResponse{}, errors.New("replication: parsing changes: full response without a snapshot")
		}
		return c, nil
	}
	var last uint64
	for i, ch := range c.Changes {
		if ch.Version < last || ch.Version > c.Version {
			return ChangesResponse{}, fmt.Errorf("replication: parsing changes: entry %d has version %d out of order (response version %d)", i, ch.Version, c.Version)
		}
		last = ch.Version
	}
	return c, nil
}

// ParseSnapshot decodes a memory.Snapshot from JSON (a GET snapshot body). It
// checks the shape only; memory.Provider.Restore validates the records.
func ParseSnapshot(data []byte) (memory.Snapshot, error) {
	s := memory.Snapshot{Zones: []memory.ZoneSnapshot{}}
	h, err := readSnapshot(bytes.NewReader(data), collectSink{&s})
	if err != nil {
		return memory.Snapshot{}, err
	}
	s.Format, s.Version, s.Epoch = h.Format, h.Version, h.Epoch
	return s, nil
}

// ParseChanges decodes a ChangesResponse from JSON (a GET changes body). A
// full response must carry a snapshot; entries must be in version order and
// not beyond the response's version.
func ParseChanges(data []byte) (ChangesResponse, error) {
	return readChanges(bytes.NewReader(data), nil)
}
