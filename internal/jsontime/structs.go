package jsontime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config types across gslbkit hold plain time.Duration fields, which
// encoding/json would write as nanoseconds. Their MarshalJSON and
// UnmarshalJSON methods call Marshal and Unmarshal here, which encode such a
// struct through a shadow type whose time.Duration fields are Duration, so
// the JSON reads and writes "10s" while the Go field stays a time.Duration.
//
// Unmarshal is also strict in the way a config file should be: a key that
// names no field is an error, and so is a key that differs from a field's
// name only in case (encoding/json would accept it silently); the error
// names the key and, for a case mistake, the right spelling.
//
// The methods must pass a type without these methods (a local
// "type plain Config" conversion) so that encoding does not recurse.

var durationType = reflect.TypeFor[time.Duration]()

// shadow describes the shadow struct type of a config type.
type shadow struct {
	typ   reflect.Type
	index []int          // shadow field j is original field index[j]
	keys  map[string]int // JSON key → shadow field
}

var shadows sync.Map // reflect.Type → *shadow

func shadowOf(t reflect.Type) (*shadow, error) {
	if s, ok := shadows.Load(t); ok {
		return s.(*shadow), nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("jsontime: %v is not a struct", t)
	}
	s := &shadow{keys: map[string]int{}}
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, fmt.Errorf("jsontime: %v embeds %v, which the shadow type cannot", t, f.Type)
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sf := reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag}
		if f.Type == durationType {
			sf.Type = reflect.TypeFor[Duration]()
		}
		s.keys[name] = len(fields)
		s.index = append(s.index, i)
		fields = append(fields, sf)
	}
	s.typ = reflect.StructOf(fields)
	v, _ := shadows.LoadOrStore(t, s)
	return v.(*shadow), nil
}

func (s *shadow) fill(dst, src reflect.Value, toShadow bool) {
	for j, i := range s.index {
		if toShadow {
			dst.Field(j).Set(src.Field(i).Convert(s.typ.Field(j).Type))
		} else {
			dst.Field(i).Set(src.Field(j).Convert(dst.Type().Field(i).Type))
		}
	}
}

// Marshal encodes v, a struct, like encoding/json, writing its
// time.Duration fields as duration strings ("10s").
func Marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	s, err := shadowOf(rv.Type())
	if err != nil {
		return nil, err
	}
	sv := reflect.New(s.typ).Elem()
	s.fill(sv, rv, true)
	return json.Marshal(sv.Interface())
}

// Unmarshal decodes b into v, a pointer to a struct, reading its
// time.Duration fields from duration strings or numbers of seconds. Fields
// b does not mention keep their values. A key that names no field, or names
// one in the wrong case, is an error.
func Unmarshal(b []byte, v any) error {
	rv := reflect.ValueOf(v).Elem()
	s, err := shadowOf(rv.Type())
	if err != nil {
		return err
	}
	if err := s.checkKeys(b); err != nil {
		return err
	}
	sv := reflect.New(s.typ).Elem()
	s.fill(sv, rv, true)
	if err := json.Unmarshal(b, sv.Addr().Interface()); err != nil {
		return err
	}
	s.fill(rv, sv, false)
	return nil
}

// checkKeys reports the first key of the object b that is not a field's
// exact JSON name. A value that is not an object is left to json.Unmarshal.
func (s *shadow) checkKeys(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var bad []string
	for k := range m {
		if _, ok := s.keys[k]; !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	for known := range s.keys {
		if strings.EqualFold(known, bad[0]) {
			return fmt.Errorf("unknown key %q (keys are case-sensitive: did you mean %q?)", bad[0], known)
		}
	}
	return fmt.Errorf("unknown key %q", bad[0])
}
