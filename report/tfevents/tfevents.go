// Package tfevents writes training curves as TensorBoard event files
// (events.out.tfevents.*), with no TensorFlow dependency, and reads them back.
//
// An event file is a sequence of TFRecords, each
//
//	uint64 length, little-endian
//	uint32 masked CRC-32C of the 8 length bytes
//	length bytes of data: one serialised tensorflow.Event protocol buffer
//	uint32 masked CRC-32C of the data
//
// where masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 (TensorFlow's
// crc32c::Mask). The first event carries file_version "brain.Event:2"; each
// later one a wall time, a step and a Summary of scalar values (the
// simple_value field, which TensorBoard's scalar dashboard reads). The few
// fields used are encoded by hand:
//
//	Event:   wall_time = 1 (double), step = 2 (int64), file_version = 3
//	         (string), summary = 5 (Summary)
//	Summary: value = 1 (repeated Value)
//	Value:   tag = 1 (string), simple_value = 2 (float)
//
// TensorBoard rather than MLflow's file store: TensorBoard's event files are
// what the field's training code writes and reads without a server
// (HuggingFace's Trainer, which BeLUGA trains with, logs to TensorBoard by
// default when it is installed; PyTorch ships a writer for them), and
// `tensorboard --logdir runs/` overlays the curves of a whole sweep, each
// run in its own directory, with nothing to configure.
package tfevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Scalar is one logged value of a series.
type Scalar struct {
	Tag      string // the series, e.g. "loss/mft"
	Step     int64
	Value    float64 // stored as float32, as TensorBoard's simple_value
	WallTime time.Time
}

// FileVersion is the version string of the first event of a file.
const FileVersion = "brain.Event:2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TensorFlow's masked CRC-32C.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// writeRecord frames data as one TFRecord.
func writeRecord(w io.Writer, data []byte) error {
	var head [12]byte
	binary.LittleEndian.PutUint64(head[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(head[8:], maskedCRC(head[:8]))
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], maskedCRC(data))
	for _, b := range [][]byte{head[:], data, tail[:]} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte { return appendVarint(b, uint64(field<<3|wire)) }

func appendBytes(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, 2)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func wallTime(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// encodeEvent serialises an Event with the scalars of one step (none for
// the file-version event).
func encodeEvent(wall float64, step int64, version string, values []Scalar) []byte {
	var b []byte
	b = appendTag(b, 1, 1)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(wall))
	if step != 0 {
		b = appendTag(b, 2, 0)
		b = appendVarint(b, uint64(step))
	}
	if version != "" {
		b = appendBytes(b, 3, []byte(version))
	}
	if len(values) > 0 {
		var sum []byte
		for _, v := range values {
			var val []byte
			val = appendBytes(val, 1, []byte(v.Tag))
			val = appendTag(val, 2, 5)
			val = binary.LittleEndian.AppendUint32(val, math.Float32bits(float32(v.Value)))
			sum = appendBytes(sum, 1, val)
		}
		b = appendBytes(b, 5, sum)
	}
	return b
}

// Encode writes an event file's records to w: the file-version event at
// start, then one event per scalar, in the order given.
func Encode(w io.Writer, start time.Time, scalars []Scalar) error {
	if err := writeRecord(w, encodeEvent(wallTime(start), 0, FileVersion, nil)); err != nil {
		return err
	}
	for _, s := range scalars {
		wt := s.WallTime
		if wt.IsZero() {
			wt = start
		}
		if err := writeRecord(w, encodeEvent(wallTime(wt), s.Step, "", []Scalar{s})); err != nil {
			return err
		}
	}
	return nil
}

// FileName is TensorBoard's name for an event file written at start on host.
func FileName(start time.Time, host string) string {
	return fmt.Sprintf("events.out.tfevents.%010d.%s", start.Unix(), host)
}

// Write writes scalars as a new event file in dir, atomically, and returns
// its path. start stamps the file name and the file-version event.
func Write(dir string, start time.Time, scalars []Scalar) (string, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName(start, host))
	return path, atomicfile.Write(path, func(w io.Writer) error { return Encode(w, start, scalars) })
}

// Event is a decoded event: its version (first event) or its scalars.
type Event struct {
	WallTime    float64
	Step        int64
	FileVersion string
	Values      []Scalar // Value as float32 widened; WallTime and Step set
}

// ErrCorrupt marks a record whose length or CRC does not check.
var ErrCorrupt = errors.New("corrupt TFRecord")

// Read decodes every event of an event file, checking both CRCs of every
// record.
func Read(r io.Reader) ([]Event, error) {
	var out []Event
	for n := 0; ; n++ {
		var head [12]byte
		if _, err := io.ReadFull(r, head[:]); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("record %d: %w", n, err)
		}
		if maskedCRC(head[:8]) != binary.LittleEndian.Uint32(head[8:]) {
			return out, fmt.Errorf("record %d: length: %w", n, ErrCorrupt)
		}
		size := binary.LittleEndian.Uint64(head[:8])
		if size > 1<<30 {
			return out, fmt.Errorf("record %d: length %d: %w", n, size, ErrCorrupt)
		}
		data := make([]byte, size+4)
		if _, err := io.ReadFull(r, data); err != nil {
			return out, fmt.Errorf("record %d: %w", n, err)
		}
		if maskedCRC(data[:size]) != binary.LittleEndian.Uint32(data[size:]) {
			return out, fmt.Errorf("record %d: data: %w", n, ErrCorrupt)
		}
		ev, err := decodeEvent(data[:size])
		if err != nil {
			return out, fmt.Errorf("record %d: %w", n, err)
		}
		out = append(out, ev)
	}
}

// field is one decoded protobuf field.
type field struct {
	num, wire int
	u         uint64 // varint, fixed32, fixed64
	b         []byte // length-delimited
}

func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bad field key: %w", ErrCorrupt)
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.u, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, fmt.Errorf("bad varint in field %d: %w", f.num, ErrCorrupt)
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, fmt.Errorf("short fixed64 field %d: %w", f.num, ErrCorrupt)
			}
			f.u, b = binary.LittleEndian.Uint64(b), b[8:]
		case 5:
			if len(b) < 4 {
				return nil, fmt.Errorf("short fixed32 field %d: %w", f.num, ErrCorrupt)
			}
			f.u, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, fmt.Errorf("bad length of field %d: %w", f.num, ErrCorrupt)
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, fmt.Errorf("wire type %d of field %d: %w", f.wire, f.num, ErrCorrupt)
		}
		out = append(out, f)
	}
	return out, nil
}

func decodeEvent(b []byte) (Event, error) {
	var ev Event
	fs, err := fields(b)
	if err != nil {
		return ev, err
	}
	var summary []byte
	for _, f := range fs {
		switch {
		case f.num == 1 && f.wire == 1:
			ev.WallTime = math.Float64frombits(f.u)
		case f.num == 2 && f.wire == 0:
			ev.Step = int64(f.u)
		case f.num == 3 && f.wire == 2:
			ev.FileVersion = string(f.b)
		case f.num == 5 && f.wire == 2:
			summary = f.b
		}
	}
	vs, err := fields(summary)
	if err != nil {
		return ev, err
	}
	for _, v := range vs {
		if v.num != 1 || v.wire != 2 {
			continue
		}
		parts, err := fields(v.b)
		if err != nil {
			return ev, err
		}
		s := Scalar{Step: ev.Step, WallTime: time.Unix(0, int64(math.Round(ev.WallTime*1e9)))}
		for _, p := range parts {
			switch {
			case p.num == 1 && p.wire == 2:
				s.Tag = string(p.b)
			case p.num == 2 && p.wire == 5:
				s.Value = float64(math.Float32frombits(uint32(p.u)))
			}
		}
		ev.Values = append(ev.Values, s)
	}
	return ev, nil
}

// ReadFile decodes the event file at path.
func ReadFile(path string) ([]Event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	evs, err := Read(bytes.NewReader(b))
	if err != nil {
		return evs, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}
