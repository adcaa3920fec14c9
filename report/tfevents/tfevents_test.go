package tfevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The scalars of testdata/tfrecord.py's golden file.
var (
	start   = time.Unix(1700000000, 500000000)
	scalars = []Scalar{
		{Tag: "loss/mft", Step: 1, Value: 0.6931},
		{Tag: "lr", Step: 1, Value: 2e-5},
		{Tag: "loss/inv", Step: 2, Value: 0.25},
		{Tag: "lr", Step: 2, Value: 1e-5},
		{Tag: "loss/dir", Step: 3, Value: 1.5},
	}
)

func TestCRC32C(t *testing.T) {
	// The CRC-32C check value of "123456789" (RFC 3720, B.4).
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xe3069283 {
		t.Errorf("crc32c %#x", got)
	}
}

// TestMatchesProtobuf checks the encoding byte for byte against the file
// testdata/tfrecord.py writes with python3-protobuf's own serialiser.
func TestMatchesProtobuf(t *testing.T) {
	want, err := os.ReadFile("testdata/python.tfevents")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Encode(&got, start, scalars); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("encoding differs from protobuf's:\n got %x\nwant %x", got.Bytes(), want)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path, err := Write(dir, start, scalars)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !bytes.HasPrefix([]byte(filepath.Base(path)), []byte("events.out.tfevents.1700000000.")) {
		t.Errorf("file %s", path)
	}
	evs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1+len(scalars) || evs[0].FileVersion != FileVersion {
		t.Fatalf("%d events, first %+v", len(evs), evs[0])
	}
	for i, s := range scalars {
		ev := evs[i+1]
		if len(ev.Values) != 1 || ev.Step != s.Step || ev.Values[0].Tag != s.Tag || ev.Values[0].Value != float64(float32(s.Value)) || ev.WallTime != 1700000000.5 {
			t.Errorf("event %d: %+v, want %+v", i+1, ev, s)
		}
	}
}

func TestReadRejectsCorruption(t *testing.T) {
	var b bytes.Buffer
	if err := Encode(&b, start, scalars); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{3, 10, 20, b.Len() - 1} {
		c := bytes.Clone(b.Bytes())
		c[at] ^= 0x40
		if _, err := Read(bytes.NewReader(c)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flipped byte %d: error %v", at, err)
		}
	}
	if _, err := Read(bytes.NewReader(b.Bytes()[:b.Len()-2])); err == nil {
		t.Error("no error for a truncated file")
	}
}

// TestProtobufReadsIt has python3-protobuf decode a file written here
// (skipped where Debian's python3-protobuf is not installed).
func TestProtobufReadsIt(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import google.protobuf").Run(); err != nil {
		t.Skip("python3-protobuf not installed (Debian: apt-get install python3-protobuf)")
	}
	path, err := Write(t.TempDir(), start, scalars)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "testdata/tfrecord.py", "read", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var evs []struct {
		WallTime    float64 `json:"wall_time"`
		Step        int64
		FileVersion string `json:"file_version"`
		Values      []struct {
			Tag         string
			SimpleValue float64 `json:"simple_value"`
		}
	}
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1+len(scalars) || evs[0].FileVersion != FileVersion {
		t.Fatalf("python read %s", out)
	}
	for i, s := range scalars {
		v := evs[i+1]
		if v.Step != s.Step || len(v.Values) != 1 || v.Values[0].Tag != s.Tag || math.Abs(v.Values[0].SimpleValue-s.Value) > 1e-6*math.Abs(s.Value) {
			t.Errorf("event %d as python reads it: %+v", i+1, v)
		}
	}
}

func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "curves")
	defer os.RemoveAll(dir)
	path, err := Write(dir, time.Now(), []Scalar{{Tag: "loss/mft", Step: 1, Value: 0.69}, {Tag: "loss/mft", Step: 2, Value: 0.52}})
	if err != nil {
		panic(err)
	}
	evs, _ := ReadFile(path)
	for _, ev := range evs[1:] {
		fmt.Printf("step %d %s %.2f\n", ev.Step, ev.Values[0].Tag, ev.Values[0].Value)
	}
	// Output:
	// step 1 loss/mft 0.69
	// step 2 loss/mft 0.52
}
