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

func decodeSnapshot(dec *json.Decoder, s *memory.Snapshot) error {
	return objectKeys(dec, func(key string) error {
		switch key {
		case "format":
			return dec.Decode(&s.Format)
		case "version":
			return dec.Decode(&s.Version)
		case "epoch":
			return dec.Decode(&s.Epoch)
		case "zones":
			s.Zones = []memory.ZoneSnapshot{}
			return arrayItems(dec, func(int) error {
				var z memory.ZoneSnapshot
				if err := decodeZone(dec, &z); err != nil {
					return err
				}
				s.Zones = append(s.Zones, z)
				return nil
			})
		}
		return skipValue(dec)
	})
}

func decodeZone(dec *json.Decoder, z *memory.ZoneSnapshot) error {
	return objectKeys(dec, func(key string) error {
		switch key {
		case "name":
			return dec.Decode(&z.Name)
		case "soa":
			return dec.Decode(&z.SOA)
		case "records":
			z.Records = []memory.ZoneRecord{}
			return arrayItems(dec, func(int) error {
				var r memory.ZoneRecord
				if err := dec.Decode(&r); err != nil {
					return err
				}
				z.Records = append(z.Records, r)
				return nil
			})
		}
		return skipValue(dec)
	})
}

func decodeChanges(dec *json.Decoder, c *ChangesResponse) error {
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
			var s memory.Snapshot
			if err := decodeSnapshot(dec, &s); err != nil {
				return err
			}
			c.Snapshot = &s
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

func readSnapshot(r io.Reader) (memory.Snapshot, error) {
	var s memory.Snapshot
	if err := decodeWhole(r, func(dec *json.Decoder) error { return decodeSnapshot(dec, &s) }); err != nil {
		return memory.Snapshot{}, fmt.Errorf("replication: parsing snapshot: %w", err)
	}
	if s.Zones == nil {
		return memory.Snapshot{}, errors.New("replication: parsing snapshot: no zones field")
	}
	if s.Format > memory.ReplicationFormat {
		return memory.Snapshot{}, fmt.Errorf("replication: parsing snapshot: format %d is newer than this reader's %d", s.Format, memory.ReplicationFormat)
	}
	return s, nil
}

func readChanges(r io.Reader) (ChangesResponse, error) {
	var c ChangesResponse
	if err := decodeWhole(r, func(dec *json.Decoder) error { return decodeChanges(dec, &c) }); err != nil {
		return ChangesResponse{}, fmt.Errorf("replication: parsing changes: %w", err)
	}
	if c.Format > memory.ReplicationFormat {
		return ChangesResponse{}, fmt.Errorf("replication: parsing changes: format %d is newer than this reader's %d", c.Format, memory.ReplicationFormat)
	}
	if c.Full {
		if c.Snapshot == nil || c.Snapshot.Zones == nil {
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
func ParseSnapshot(data []byte) (memory.Snapshot, error) { return readSnapshot(bytes.NewReader(data)) }

// ParseChanges decodes a ChangesResponse from JSON (a GET changes body). A
// full response must carry a snapshot; entries must be in version order and
// not beyond the response's version.
func ParseChanges(data []byte) (ChangesResponse, error) { return readChanges(bytes.NewReader(data)) }
