package train

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
)

// CorrectLPFrozenEval runs linear probing (LP, and LP-FT's probing phase)
// with the frozen encoder in evaluation mode. BeLUGA freezes the encoder by
// requires_grad=False only: the Trainer's model.train() leaves its dropout
// on, so every visit of an input sees the encoder through a fresh dropout
// mask, and the faithful LP must run the encoder at every step. With the
// encoder's dropout off its output for an input never changes: it is
// computed once per input and the head (its own dropout, the classifier) is
// trained on it, in the same batches as the faithful run.
const CorrectLPFrozenEval = "lp-frozen-eval"

// headModel is a classifier whose head can be trained alone on features of
// its frozen encoder (models.SequenceClassifier).
type headModel interface {
	// Infer's Output.Pooled are the features: the encoder's output in
	// evaluation mode, what the head reads.
	Infer(b models.Batch) (models.Output, error)
	// HeadForward runs the head on rows of features.
	HeadForward(features []float32, rows int, train bool) (models.Pass, error)
}

// featureBatch is how many inputs share a batch when features are computed:
// sorted by length, so that little of it is padding.
const featureBatch = 64

// cachedProbe is linear probing on cached features (CorrectLPFrozenEval):
// erm's batches, the same draws from the same mixer, but each input's
// encoder output looked up and only the head run and back-propagated. The
// features of every input of the phase are computed at its first update,
// or read from the cache directory's features/, one file per frozen
// encoder, shared by the runs of a sweep that probe the same encoder.
type cachedProbe struct {
	erm
	data  Data
	feats map[string][]float32 // by encKey
}

func (c *cachedProbe) Plan(data Data, hp Hyper, seed uint64) (int, int, error) {
	c.data, c.feats = data, nil
	return c.erm.Plan(data, hp, seed)
}

func (c *cachedProbe) Update(st *UpdateState) (Step, error) {
	hm, ok := st.Model.(headModel)
	if !ok {
		return Step{}, fmt.Errorf("correction %s: the model (%T) cannot train its head on cached features", CorrectLPFrozenEval, st.Model)
	}
	if c.feats == nil {
		if err := c.featurise(hm, st.Model, st.Cache); err != nil {
			return Step{}, err
		}
	}
	if len(c.pending) == 0 {
		c.pending = c.mx.Epoch()
	}
	b := c.pending[0]
	c.pending = c.pending[1:]
	rows := b.Input.Size
	var x []float32
	for i := 0; i < rows; i++ {
		f, ok := c.feats[encKey(batchRow(b.Input, i))]
		if !ok {
			return Step{}, fmt.Errorf("correction %s: no features for row %d of a %s batch", CorrectLPFrozenEval, i, b.Kind)
		}
		x = append(x, f...)
	}
	pass, err := hm.HeadForward(x, rows, true)
	if err != nil {
		return Step{}, err
	}
	defer pass.Release()
	kind := b.Kind.String()
	l, dz, err := batchLoss(st.Losses, b, st.Hyper.Loss)(pass.Logits())
	if err != nil {
		return Step{Loss: l, Kind: kind}, fmt.Errorf("loss: %w", err)
	}
	return Step{Loss: l, Kind: kind}, pass.Backward(dz)
}

// featurise fills c.feats with the features of every input of c.data: read
// from the cache when it has them, the others computed in evaluation mode
// in length-sorted batches (and the cache file rewritten with them).
func (c *cachedProbe) featurise(hm headModel, m models.Classifier, cacheDir string) error {
	path := ""
	if cacheDir != "" {
		path = filepath.Join(cacheDir, "features", encoderFingerprint(m)+".feat")
		// A missing or damaged file is recomputed and rewritten.
		c.feats, _ = readFeatures(path)
	}
	if c.feats == nil {
		c.feats = map[string][]float32{}
	}
	todo := map[string]models.Encoding{}
	for _, e := range dataEncodings(c.data) {
		if k := encKey(e); c.feats[k] == nil {
			todo[k] = e
		}
	}
	if len(todo) == 0 {
		return nil
	}
	keys := make([]string, 0, len(todo))
	for k := range todo {
		keys = append(keys, k)
	}
	// Sorted by length, then content: the batches, and so the features'
	// last bits, do not depend on map order.
	sort.Slice(keys, func(a, b int) bool {
		if la, lb := len(todo[keys[a]].IDs), len(todo[keys[b]].IDs); la != lb {
			return la < lb
		}
		return keys[a] < keys[b]
	})
	for start := 0; start < len(keys); start += featureBatch {
		chunk := keys[start:min(start+featureBatch, len(keys))]
		encs := make([]models.Encoding, len(chunk))
		for i, k := range chunk {
			encs[i] = todo[k]
		}
		out, err := hm.Infer(models.NewBatch(encs))
		if err != nil {
			return fmt.Errorf("encoder features: %w", err)
		}
		if len(out.Pooled) == 0 || len(out.Pooled)%len(chunk) != 0 {
			return fmt.Errorf("encoder features: %d values for %d inputs", len(out.Pooled), len(chunk))
		}
		w := len(out.Pooled) / len(chunk)
		for i, k := range chunk {
			c.feats[k] = out.Pooled[i*w : (i+1)*w : (i+1)*w]
		}
	}
	if path == "" {
		return nil
	}
	if err := writeFeatures(path, c.feats); err != nil {
		return fmt.Errorf("feature cache: %w", err)
	}
	return nil
}

// dataEncodings lists every input a phase can train on.
func dataEncodings(d Data) []models.Encoding {
	var out []models.Encoding
	for _, r := range d.IID {
		out = append(out, r.Enc)
	}
	if s := d.Suite; s != nil {
		for _, r := range s.MFT {
			out = append(out, r.Enc)
		}
		for _, ps := range [][]Perturbed{s.INV, s.DIR, s.LabelDIR} {
			for _, p := range ps {
				out = append(append(out, p.Orig), p.Perts...)
			}
		}
	}
	return out
}

// encKey identifies an input by its tokens and token types.
func encKey(e models.Encoding) string {
	buf := make([]byte, 0, 5*len(e.IDs))
	for j, id := range e.IDs {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		buf = append(buf, byte(e.TypeIDs[j]))
	}
	return string(buf)
}

// batchRow recovers row i's encoding from a padded batch.
func batchRow(b models.Batch, i int) models.Encoding {
	L := b.SeqLen
	n := 0
	for n < L && b.Mask[i*L+n] != 0 {
		n++
	}
	return models.Encoding{IDs: b.IDs[i*L : i*L+n], TypeIDs: b.Types[i*L : i*L+n]}
}

// encoderFingerprint identifies what a frozen encoder computes: the model's
// type and every encoder parameter's name, shape and values.
func encoderFingerprint(m models.Classifier) string {
	h := sha256.New()
	fmt.Fprintf(h, "%T\n", m)
	buf := make([]byte, 0, 1<<16)
	for _, p := range m.Params() {
		if !p.Encoder {
			continue
		}
		fmt.Fprintf(h, "%s %v\n", p.Name, p.Shape)
		for _, v := range p.Value {
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		h.Write(buf)
		buf = buf[:0]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// featureMagic starts every feature file; its last byte is the format
// version. Then the feature width and the number of inputs, and per input
// its key's length, its key and its features (float32); all little-endian.
const featureMagic = "beluga-features\x00\x01"

func writeFeatures(path string, feats map[string][]float32) error {
	keys := make([]string, 0, len(feats))
	width := 0
	for k, f := range feats {
		keys = append(keys, k)
		width = len(f)
	}
	sort.Strings(keys)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		bw.WriteString(featureMagic)
		var b [4]byte
		put := func(v uint32) {
			binary.LittleEndian.PutUint32(b[:], v)
			bw.Write(b[:])
		}
		put(uint32(width))
		put(uint32(len(keys)))
		for _, k := range keys {
			f := feats[k]
			if len(f) != width {
				return fmt.Errorf("features of width %d and %d", width, len(f))
			}
			put(uint32(len(k)))
			bw.WriteString(k)
			for _, v := range f {
				put(math.Float32bits(v))
			}
		}
		return bw.Flush()
	})
}

func readFeatures(path string) (map[string][]float32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("feature cache %s: damaged or of another version", path)
	if !bytes.HasPrefix(data, []byte(featureMagic)) {
		return nil, bad
	}
	data = data[len(featureMagic):]
	u32 := func() (int, bool) {
		if len(data) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(data)
		data = data[4:]
		return int(v), true
	}
	width, ok1 := u32()
	n, ok2 := u32()
	if !ok1 || !ok2 || width == 0 {
		return nil, bad
	}
	vals := make([]float32, 0, min(n, len(data)/(4*width))*width)
	keys := make([]string, 0, min(n, len(data)/4))
	for range n {
		l, ok := u32()
		if !ok || len(data) < l+4*width {
			return nil, bad
		}
		keys = append(keys, string(data[:l]))
		data = data[l:]
		for j := 0; j < width; j++ {
			vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:])))
		}
		data = data[4*width:]
	}
	if len(data) != 0 {
		return nil, bad
	}
	feats := make(map[string][]float32, n)
	for i, k := range keys {
		feats[k] = vals[i*width : (i+1)*width : (i+1)*width]
	}
	return feats, nil
}
