package checkpoint

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/beluga-nlp/beluga/internal/pickscan"
)

// maxStatePickle bounds data.pkl, the pickled state dict without its
// tensors' data: a few hundred kilobytes for the largest BERTs.
const maxStatePickle = 256 << 20

// maxDeflateRatio is deflate's largest expansion (about 1032:1) with room.
const maxDeflateRatio = 1100

// storageBytes is the size of one element of each torch storage class.
var storageBytes = map[string]uint64{
	"FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "DoubleStorage": 8,
	"LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1, "BoolStorage": 1,
}

// checkPyTorch guards gopickle against a corrupt or hostile
// pytorch_model.bin before it reads one: gopickle allocates every length
// the pickle declares, and every storage's element count, before reading
// them. The state-dict pickle is scanned opcode by opcode, then unpickled
// with inert stand-ins for torch's classes to collect the storages it
// refers to, each of which must fit in its archive member.
func checkPyTorch(file string) error {
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return fmt.Errorf("not a zip archive (truncated, or the pre-1.6 format, which is not supported): %w", err)
	}
	defer zr.Close()
	members := map[string]*zip.File{}
	for _, f := range zr.File {
		// gopickle finds members by base name; so does the guard.
		_, base := path.Split(f.Name)
		members[base] = f
		limit := uint64(st.Size())
		if f.Method != zip.Store {
			limit *= maxDeflateRatio
		}
		if f.UncompressedSize64 > limit || (f.Method == zip.Store && f.UncompressedSize64 != f.CompressedSize64) {
			return fmt.Errorf("archive member %s declares %d bytes, impossible in a %d-byte file", f.Name, f.UncompressedSize64, st.Size())
		}
	}
	pkl, ok := members["data.pkl"]
	if !ok {
		return fmt.Errorf("no data.pkl in the archive")
	}
	if pkl.UncompressedSize64 > maxStatePickle {
		return fmt.Errorf("data.pkl declares %d bytes, more than a state dict needs", pkl.UncompressedSize64)
	}
	rc, err := pkl.Open()
	if err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxStatePickle))
	rc.Close()
	if err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	if err := pickscan.Scan(data); err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (any, error) { return &inert{module: module, name: name}, nil }
	u.PersistentLoad = func(id any) (any, error) {
		t, ok := id.(*types.Tuple)
		if !ok || t.Len() < 5 {
			return nil, fmt.Errorf("persistent id %v is not a storage tuple", id)
		}
		class, _ := t.Get(1).(*inert)
		key, _ := t.Get(2).(string)
		numel, ok := t.Get(4).(int)
		if class == nil || key == "" || !ok || numel < 0 {
			return nil, fmt.Errorf("persistent id %v is not a storage tuple", id)
		}
		size, known := storageBytes[class.name]
		if !known {
			return nil, fmt.Errorf("storage %s: unsupported type %s.%s", key, class.module, class.name)
		}
		m, ok := members[key]
		if !ok {
			return nil, fmt.Errorf("storage %s: no such archive member", key)
		}
		if uint64(numel) > m.UncompressedSize64/size {
			return nil, fmt.Errorf("storage %s declares %d values of %d bytes, its archive member holds %d bytes", key, numel, size, m.UncompressedSize64)
		}
		return &inert{}, nil
	}
	if _, err := u.Load(); err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	return nil
}

// inert stands in for every class and object a state-dict pickle names
// (torch's rebuild functions, storages, tensors) during the guard's pass.
type inert struct{ module, name string }

func (*inert) Call(...any) (any, error)  { return &inert{}, nil }
func (*inert) PyNew(...any) (any, error) { return &inert{}, nil }
func (*inert) PySetState(any) error      { return nil }
