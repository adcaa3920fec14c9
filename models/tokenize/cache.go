package tokenize

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
)

// Encoder is a tokenizer whose encodings are fully determined by its
// Fingerprint, so that they can be cached: every Tokenizer, and WordLevel.
type Encoder interface {
	Encode(text, pair string, isPair bool) (models.Encoding, error)
	Fingerprint() string
}

// Input is one text, or a pair of texts, to tokenise.
type Input struct {
	Text   string
	Pair   string
	IsPair bool
}

// Cache keeps tokenised input lists in a directory, one file per list, named
// by a hash of the tokenizer's fingerprint and of the inputs: the runs of a
// sweep that share a suite or dataset and a tokenizer tokenise it once. Runs
// may share the directory concurrently; files are written atomically, and a
// file that cannot be read back — truncated, or failing the SHA-256 of its
// content that ends it (ids shifted or overwritten in place) — is
// recomputed and rewritten, never trained on.
type Cache struct {
	dir string
}

// NewCache opens (creating it if needed) a cache directory.
func NewCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tokenisation cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// cacheMagic starts every cache file; its last byte is the format version
// (2: with the SHA-256 trailer).
const cacheMagic = "beluga-tokens\x00\x02"

// Key is the content address of inputs tokenised by tk.
func Key(tk Encoder, inputs []Input) string {
	h := sha256.New()
	var n [8]byte
	field := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	field(cacheMagic)
	field(tk.Fingerprint())
	binary.LittleEndian.PutUint64(n[:], uint64(len(inputs)))
	h.Write(n[:])
	for _, in := range inputs {
		field(in.Text)
		if in.IsPair {
			h.Write([]byte{1})
			field(in.Pair)
		} else {
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Path is the file that holds (or will hold) inputs tokenised by tk.
func (c *Cache) Path(tk Encoder, inputs []Input) string {
	return filepath.Join(c.dir, Key(tk, inputs)+".tok")
}

// Encode returns the encodings of inputs by tk, read from the cache when
// they are there, else computed and stored. Cancelling ctx stops the
// tokenising before the next input, and nothing is stored.
func (c *Cache) Encode(ctx context.Context, tk Encoder, inputs []Input) ([]models.Encoding, error) {
	path := c.Path(tk, inputs)
	if encs, err := readEncodings(path, len(inputs)); err == nil {
		return encs, nil
	}
	// Missing, or damaged: (re)compute and (re)write it.
	encs := make([]models.Encoding, len(inputs))
	for i, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tokenising stopped after %d of %d inputs: %w", i, len(inputs), err)
		}
		enc, err := tk.Encode(in.Text, in.Pair, in.IsPair)
		if err != nil {
			return nil, fmt.Errorf("tokenise input %d: %w", i, err)
		}
		encs[i] = enc
	}
	if err := writeEncodings(path, encs); err != nil {
		return nil, fmt.Errorf("tokenisation cache: %w", err)
	}
	return encs, nil
}

// The file: cacheMagic, the number of encodings, then per encoding its
// length, its ids (uint32) and its token types (uint8); all little-endian;
// then the SHA-256 of all that.

func writeEncodings(path string, encs []models.Encoding) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		h := sha256.New()
		bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
		bw.WriteString(cacheMagic)
		var b [4]byte
		put := func(v int) {
			binary.LittleEndian.PutUint32(b[:], uint32(v))
			bw.Write(b[:])
		}
		put(len(encs))
		for i, e := range encs {
			if len(e.TypeIDs) != len(e.IDs) {
				return fmt.Errorf("encoding %d has %d ids and %d token types", i, len(e.IDs), len(e.TypeIDs))
			}
			put(len(e.IDs))
			for _, id := range e.IDs {
				if id < 0 || id > 1<<32-1 {
					return fmt.Errorf("encoding %d: token id %d does not fit the cache format", i, id)
				}
				put(id)
			}
			for _, t := range e.TypeIDs {
				if t < 0 || t > 255 {
					return fmt.Errorf("encoding %d: token type %d does not fit the cache format", i, t)
				}
				bw.WriteByte(byte(t))
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		_, err := w.Write(h.Sum(nil))
		return err
	})
}

// readEncodings reads a cache file of want encodings; all the ids and types
// share one allocation.
func readEncodings(path string, want int) ([]models.Encoding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(why string) error { return fmt.Errorf("tokenisation cache %s: %s", path, why) }
	if !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return nil, bad("not a cache file of this version")
	}
	if len(data) < len(cacheMagic)+sha256.Size {
		return nil, bad("truncated")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, bad("its content does not match its checksum (damaged)")
	}
	data = body[len(cacheMagic):]
	u32 := func() (int, bool) {
		if len(data) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(data)
		data = data[4:]
		return int(v), true
	}
	n, ok := u32()
	if !ok || n != want {
		return nil, bad(fmt.Sprintf("holds %d encodings, want %d", n, want))
	}
	// Every token takes 5 bytes, every encoding 4 more: the total is known
	// before allocating.
	tokens := (len(data) - 4*n) / 5
	if tokens < 0 || 4*n+5*tokens != len(data) {
		return nil, bad("truncated")
	}
	ints := make([]int, 2*tokens)
	encs := make([]models.Encoding, n)
	for i := range encs {
		l, ok := u32()
		if !ok || 5*l > len(data) || 2*l > len(ints) {
			return nil, bad(fmt.Sprintf("encoding %d is truncated", i))
		}
		ids, types := ints[:l:l], ints[l:2*l:2*l]
		ints = ints[2*l:]
		for j := range ids {
			ids[j] = int(binary.LittleEndian.Uint32(data[4*j:]))
		}
		data = data[4*l:]
		for j := range types {
			types[j] = int(data[j])
		}
		data = data[l:]
		encs[i] = models.Encoding{IDs: ids, TypeIDs: types}
	}
	if len(data) != 0 {
		return nil, bad("trailing bytes")
	}
	return encs, nil
}
