package checkpoint

import (
	"archive/tar"
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/pickle"
)

// This file reads pytorch_model.bin in every format torch.save has
// written, each by the layout torch.load reads (torch/serialization.py):
//
//   - zip (torch ≥ 1.6, the default since): archive/data.pkl, the pickled
//     state dict whose storages are persistent ids ("storage", class, key,
//     location, numel), each storage's bytes in the member archive/data/key;
//     an optional archive/byteorder ("little" or "big").
//   - legacy stream (torch < 1.6, and torch.save's
//     _use_new_zipfile_serialization=False): five pickles — a magic number,
//     the protocol version 1001, system information (byte order, type
//     sizes), the state dict whose storages are persistent ids ("storage",
//     class, root key, location, numel, view), the list of root keys — then
//     each root storage in that order as an int64 element count and its
//     bytes.
//   - legacy tar (torch ≤ 0.3): members "storages" (a count, then per
//     storage a pickled (key, location, class), an int64 element count and
//     the bytes; then the views), "tensors" (a count, then per tensor a
//     pickled (key, storage key, class) and its int32 rank, 4 padding bytes,
//     int64 sizes, strides and offset) and "pickle", the state dict whose
//     tensors are persistent ids naming those keys.
//
// The state dict may be any mapping (a dict, as transformers'
// save_pretrained writes it, or an OrderedDict, as model.state_dict()
// returns it) from names to tensors; a tensor may be a Parameter or a
// tensor subclass. Every element type torch stores is read: floating point
// (float64, float32, float16, bfloat16) into Tensors as float32, integer
// and boolean tensors (buffers such as position_ids) into Buffers.

// maxStatePickle bounds data.pkl, the pickled state dict without its
// tensors' data: a few hundred kilobytes for the largest BERTs.
const maxStatePickle = 256 << 20

// maxDeflateRatio is deflate's largest expansion (about 1032:1) with room.
const maxDeflateRatio = 1100

// maxTensorElements bounds one tensor's element count.
const maxTensorElements = math.MaxInt32

// maxExpanded bounds the elements of a tensor that views its storage more
// than once (zero strides, as torch's expand makes position_ids): such
// buffers are a few thousand elements.
const maxExpanded = 1 << 20

// legacyMagic is torch.save's MAGIC_NUMBER, the first pickle of a legacy
// stream.
var legacyMagic, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

// storageRef is a storage a persistent id named: numel elements of dtype
// starting at element start of the root storage root.
type storageRef struct {
	dtype dtype
	root  string
	start int
	numel int
}

// tensorRef is a tensor as torch's rebuild functions describe it: a view
// of a storage.
type tensorRef struct {
	storage *storageRef
	offset  int
	shape   []int
	stride  []int
}

func (*storageRef) PyType() string { return "storage" }
func (*tensorRef) PyType() string  { return "tensor" }

// SetState takes BUILD's state of a tensor: its Python attributes, which
// say nothing about its values.
func (*tensorRef) SetState(any) error { return nil }

// ReadPyTorch reads a pytorch_model.bin (any format torch.save writes) as
// float32 weights and integer buffers, honouring storage offsets, strides
// and byte order.
func ReadPyTorch(file string) (*State, error) { return readPyTorch(file, limits{}) }

func readPyTorch(file string, lim limits) (*State, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", file, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", file, err)
	}
	st, err := decodePyTorch(f, info.Size(), lim)
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", file, err)
	}
	return st, nil
}

// decodePyTorch reads the size bytes of r in the format they start with.
func decodePyTorch(r io.ReaderAt, size int64, lim limits) (*State, error) {
	var head [512]byte
	n, _ := r.ReadAt(head[:], 0)
	switch {
	case n >= 4 && string(head[:4]) == "PK\x03\x04":
		return readTorchZip(r, size, lim)
	case n >= 262 && string(head[257:262]) == "ustar":
		return readTorchTar(io.NewSectionReader(r, 0, size), size, lim)
	case n >= 2 && head[0] == 0x80:
		b := make([]byte, size)
		if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
			return nil, err
		}
		return readTorchLegacy(b, lim)
	}
	return nil, errors.New("not a file torch.save writes (neither a zip archive, a tar archive nor a pickle)")
}

// readTorchZip reads torch.save's zip format.
func readTorchZip(r io.ReaderAt, size int64, lim limits) (*State, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("zip archive: %w", err)
	}
	var pkl *zip.File
	members := map[string]*zip.File{}
	for _, f := range zr.File {
		limit := uint64(size)
		if f.Method != zip.Store {
			limit *= maxDeflateRatio
		}
		if f.UncompressedSize64 > limit || (f.Method == zip.Store && f.UncompressedSize64 != f.CompressedSize64) {
			return nil, fmt.Errorf("archive member %s declares %d bytes, impossible in a %d-byte file", f.Name, f.UncompressedSize64, size)
		}
		members[f.Name] = f
		if path.Base(f.Name) == "data.pkl" && strings.Count(f.Name, "/") == 1 {
			if pkl != nil {
				return nil, fmt.Errorf("two state dicts in the archive (%s, %s)", pkl.Name, f.Name)
			}
			pkl = f
		}
	}
	if pkl == nil {
		return nil, errors.New("no data.pkl in the archive")
	}
	if pkl.UncompressedSize64 > maxStatePickle {
		return nil, fmt.Errorf("data.pkl declares %d bytes, more than a state dict needs", pkl.UncompressedSize64)
	}
	prefix := path.Dir(pkl.Name) + "/"
	data, err := readMember(pkl, int(pkl.UncompressedSize64))
	if err != nil {
		return nil, err
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if bo := members[prefix+"byteorder"]; bo != nil && bo.UncompressedSize64 < 16 {
		b, err := readMember(bo, int(bo.UncompressedSize64))
		if err != nil {
			return nil, err
		}
		switch strings.TrimSpace(string(b)) {
		case "little":
		case "big":
			order = binary.BigEndian
		default:
			return nil, fmt.Errorf("byteorder %q", b)
		}
	}
	roots := map[string]*zip.File{}
	// rootBytes are the bytes of each root storage the state dict reads:
	// its declared elements, never the member's declared size.
	rootBytes := map[string]int{}
	u := pickle.New(data, stateDictAllow)
	u.Persistent = func(pid any) (any, error) {
		t, ok := pid.(pickle.Tuple)
		if !ok || len(t) != 5 || t[0] != "storage" {
			return nil, fmt.Errorf("persistent id %s is not a storage (\"storage\", class, key, location, numel)", pickle.Describe(pid))
		}
		d, err := storageDType(t[1])
		if err != nil {
			return nil, err
		}
		key, ok1 := t[2].(string)
		numel, ok2 := t[4].(int64)
		if !ok1 || !ok2 || numel < 0 {
			return nil, fmt.Errorf("persistent id %s is not a storage (\"storage\", class, key, location, numel)", pickle.Describe(pid))
		}
		m := members[prefix+"data/"+key]
		if m == nil {
			return nil, fmt.Errorf("storage %s: no member %sdata/%s in the archive", key, prefix, key)
		}
		if uint64(numel) > m.UncompressedSize64/uint64(d.size) {
			return nil, fmt.Errorf("storage %s declares %d values of %d bytes, its archive member holds %d bytes", key, numel, d.size, m.UncompressedSize64)
		}
		roots[key] = m
		rootBytes[key] = max(rootBytes[key], int(numel)*d.size)
		return &storageRef{dtype: d, root: key, numel: int(numel)}, nil
	}
	obj, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("data.pkl: %w", err)
	}
	cache := map[string][]byte{}
	return materialise(obj, order, lim, func(root string) int { return rootBytes[root] }, func(s *storageRef) ([]byte, error) {
		b, ok := cache[s.root]
		if !ok {
			if b, err = readMember(roots[s.root], rootBytes[s.root]); err != nil {
				return nil, err
			}
			cache[s.root] = b
		}
		return b, nil
	})
}

// readMember reads the first n bytes of a zip member, n checked against
// its declared size and the limits by the caller: a member that deflates to
// gigabytes is never inflated past what is read of it.
func readMember(f *zip.File, n int) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return b, nil
}

// readTorchLegacy reads torch.save's stream format of torch < 1.6.
func readTorchLegacy(b []byte, lim limits) (*State, error) {
	u := pickle.New(b, stateDictAllow)
	magic, err := loadAs(u, "legacy format", "magic number")
	if err != nil {
		return nil, err
	}
	if m, ok := magic.(*big.Int); !ok || m.Cmp(legacyMagic) != 0 {
		return nil, fmt.Errorf("legacy format: magic number %v, want %v", pickle.Describe(magic), legacyMagic)
	}
	next := func(what string) (any, error) { return loadAs(u, "legacy format", what) }
	proto, err := next("protocol version")
	if err != nil {
		return nil, err
	}
	if proto != int64(1001) {
		return nil, fmt.Errorf("legacy format: protocol version %v, want 1001", pickle.Describe(proto))
	}
	info, err := next("system information")
	if err != nil {
		return nil, err
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if d, ok := info.(*pickle.Dict); ok {
		if le, ok := d.Get("little_endian"); ok && le == false {
			order = binary.BigEndian
		}
	}
	type root struct {
		dtype dtype
		numel int
	}
	roots := map[string]root{}
	u.Persistent = func(pid any) (any, error) {
		t, ok := pid.(pickle.Tuple)
		if ok && len(t) > 0 && t[0] == "module" {
			return nil, errors.New("a pickled torch.nn.Module, not a state dict: save model.state_dict() instead")
		}
		if !ok || len(t) != 6 || t[0] != "storage" {
			return nil, fmt.Errorf("persistent id %s is not a storage (\"storage\", class, key, location, numel, view)", pickle.Describe(pid))
		}
		d, err := storageDType(t[1])
		if err != nil {
			return nil, err
		}
		key, ok1 := t[2].(string)
		numel, ok2 := t[4].(int64)
		if !ok1 || !ok2 || numel < 0 || numel > int64(len(b))/int64(d.size) {
			return nil, fmt.Errorf("persistent id %s: not a storage that fits in the file", pickle.Describe(pid))
		}
		if r, seen := roots[key]; seen && (r.dtype != d || r.numel != int(numel)) {
			return nil, fmt.Errorf("storage %s declared twice, as %d %s and %d %s", key, r.numel, r.dtype.name, numel, d.name)
		}
		roots[key] = root{d, int(numel)}
		ref := &storageRef{dtype: d, root: key, numel: int(numel)}
		if t[5] != nil {
			v, ok := t[5].(pickle.Tuple)
			if !ok || len(v) != 3 {
				return nil, fmt.Errorf("storage %s: view %s is not (key, offset, size)", key, pickle.Describe(t[5]))
			}
			off, ok1 := v[1].(int64)
			size, ok2 := v[2].(int64)
			if !ok1 || !ok2 || off < 0 || size < 0 || off > numel || size > numel-off {
				return nil, fmt.Errorf("storage %s: view %s outside its %d elements", key, pickle.Describe(t[5]), numel)
			}
			ref.start, ref.numel = int(off), int(size)
		}
		return ref, nil
	}
	obj, err := next("state dict")
	if err != nil {
		return nil, err
	}
	u.Persistent = nil
	keysObj, err := next("storage keys")
	if err != nil {
		return nil, err
	}
	keys, ok := keysObj.(*pickle.List)
	if !ok {
		return nil, fmt.Errorf("legacy format: storage keys are a %s, want a list", pickle.TypeName(keysObj))
	}
	data := map[string][]byte{}
	pos := u.Pos()
	for _, k := range keys.Items {
		key, ok := k.(string)
		r, known := roots[key]
		if !ok || !known {
			return nil, fmt.Errorf("legacy format: storage key %s names no storage of the state dict", pickle.Describe(k))
		}
		if len(b)-pos < 8 {
			return nil, fmt.Errorf("legacy format: storage %s: truncated at byte %d", key, pos)
		}
		numel := int64(order.Uint64(b[pos:]))
		pos += 8
		if numel != int64(r.numel) {
			return nil, fmt.Errorf("legacy format: storage %s holds %d elements, its persistent id says %d", key, numel, r.numel)
		}
		nb := r.numel * r.dtype.size
		if nb > len(b)-pos {
			return nil, fmt.Errorf("legacy format: storage %s: %d bytes wanted at byte %d, %d left", key, nb, pos, len(b)-pos)
		}
		data[key] = b[pos : pos+nb]
		pos += nb
	}
	return materialise(obj, order, lim, nil, func(s *storageRef) ([]byte, error) {
		d, ok := data[s.root]
		if !ok {
			return nil, fmt.Errorf("legacy format: storage %s is not in the file", s.root)
		}
		return d, nil
	})
}

// readTorchTar reads torch.save's tar format of torch ≤ 0.3.
func readTorchTar(r io.Reader, size int64, lim limits) (*State, error) {
	members := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tar archive: %w", err)
		}
		if h.Size > size {
			return nil, fmt.Errorf("tar member %s declares %d bytes, impossible in a %d-byte file", h.Name, h.Size, size)
		}
		switch h.Name {
		case "storages", "tensors", "pickle":
			b := make([]byte, h.Size)
			if _, err := io.ReadFull(tr, b); err != nil {
				return nil, fmt.Errorf("tar member %s: %w", h.Name, err)
			}
			members[h.Name] = b
		}
	}
	for _, m := range []string{"storages", "tensors", "pickle"} {
		if members[m] == nil {
			return nil, fmt.Errorf("tar archive without the member %q torch.save writes", m)
		}
	}
	order := binary.LittleEndian
	storages, data, err := tarStorages(members["storages"])
	if err != nil {
		return nil, err
	}
	var u *pickle.Machine // the member being read
	next := func(what string) (any, error) { return loadAs(u, "legacy tar format", what) }
	// tensors: a count, then per tensor (key, storage key, class) and its
	// geometry.
	tb := members["tensors"]
	u = pickle.New(tb, stateDictAllow)
	count, err := next("tensor count")
	if err != nil {
		return nil, err
	}
	n, ok := count.(int64)
	if !ok || n < 0 || n > int64(len(tb)) {
		return nil, fmt.Errorf("legacy tar format: tensor count %s", pickle.Describe(count))
	}
	tensors := map[string]*tensorRef{}
	for i := int64(0); i < n; i++ {
		v, err := next("tensor")
		if err != nil {
			return nil, err
		}
		t, ok := v.(pickle.Tuple)
		if !ok || len(t) != 3 {
			return nil, fmt.Errorf("legacy tar format: tensor %s is not (key, storage, class)", pickle.Describe(v))
		}
		key := keyString(t[0])
		s := storages[keyString(t[1])]
		if s == nil {
			return nil, fmt.Errorf("legacy tar format: tensor %s: no storage %s", key, pickle.Describe(t[1]))
		}
		pos := u.Pos()
		if len(tb)-pos < 8 {
			return nil, fmt.Errorf("legacy tar format: tensor %s: truncated", key)
		}
		ndim := int(int32(order.Uint32(tb[pos:])))
		pos += 8 // the rank, and 4 bytes torch skips
		if ndim < 0 || ndim > 64 || (2*ndim+1)*8 > len(tb)-pos {
			return nil, fmt.Errorf("legacy tar format: tensor %s: rank %d does not fit", key, ndim)
		}
		geo := make([]int64, 2*ndim+1)
		for j := range geo {
			geo[j] = int64(order.Uint64(tb[pos:]))
			pos += 8
		}
		u.Skip(pos - u.Pos())
		args := pickle.Tuple{s, geo[2*ndim], int64Tuple(geo[:ndim]), int64Tuple(geo[ndim : 2*ndim])}
		tr, err := rebuildTensor(args)
		if err != nil {
			return nil, fmt.Errorf("legacy tar format: tensor %s: %w", key, err)
		}
		tensors[key] = tr
	}
	u = pickle.New(members["pickle"], stateDictAllow)
	u.Persistent = func(pid any) (any, error) {
		if t, ok := pid.(pickle.Tuple); ok {
			return nil, fmt.Errorf("persistent id %s: a pickled torch.nn.Module, not a state dict: save model.state_dict() instead", pickle.Describe(t))
		}
		t := tensors[keyString(pid)]
		if t == nil {
			return nil, fmt.Errorf("persistent id %s names no tensor of the archive", pickle.Describe(pid))
		}
		// torch ≤ 0.3 names a tied weight's one tensor under both names.
		tied := *t
		return &tied, nil
	}
	obj, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("legacy tar format: state dict: %w", err)
	}
	return materialise(obj, order, lim, nil, func(s *storageRef) ([]byte, error) { return data[s.root], nil })
}

// tarStorages reads the "storages" member of torch ≤ 0.3's tar format: a
// count, then per storage (key, location, class), an int64 element count
// and the bytes; then the views (key, root key, offset, size).
func tarStorages(sb []byte) (map[string]*storageRef, map[string][]byte, error) {
	order := binary.LittleEndian
	u := pickle.New(sb, stateDictAllow)
	next := func(what string) (any, error) { return loadAs(u, "legacy tar format", what) }
	count, err := next("storage count")
	if err != nil {
		return nil, nil, err
	}
	n, ok := count.(int64)
	if !ok || n < 0 || n > int64(len(sb)) {
		return nil, nil, fmt.Errorf("legacy tar format: storage count %s", pickle.Describe(count))
	}
	storages := map[string]*storageRef{}
	data := map[string][]byte{}
	for i := int64(0); i < n; i++ {
		v, err := next("storage")
		if err != nil {
			return nil, nil, err
		}
		t, ok := v.(pickle.Tuple)
		if !ok || len(t) != 3 {
			return nil, nil, fmt.Errorf("legacy tar format: storage %s is not (key, location, class)", pickle.Describe(v))
		}
		d, err := storageDType(t[2])
		if err != nil {
			return nil, nil, err
		}
		key := keyString(t[0])
		pos := u.Pos()
		if len(sb)-pos < 8 {
			return nil, nil, fmt.Errorf("legacy tar format: storage %s: truncated", key)
		}
		numel := int64(order.Uint64(sb[pos:]))
		pos += 8
		if numel < 0 || numel > int64(len(sb)-pos)/int64(d.size) {
			return nil, nil, fmt.Errorf("legacy tar format: storage %s declares %d elements, %d bytes are left", key, numel, len(sb)-pos)
		}
		nb := int(numel) * d.size
		data[key] = sb[pos : pos+nb]
		u.Skip(8 + nb)
		storages[key] = &storageRef{dtype: d, root: key, numel: int(numel)}
	}
	views, err := next("storage views")
	if err != nil {
		return nil, nil, err
	}
	vl, ok := views.(*pickle.List)
	if !ok {
		return nil, nil, fmt.Errorf("legacy tar format: storage views are a %s, want a list", pickle.TypeName(views))
	}
	for _, v := range vl.Items {
		t, ok := v.(pickle.Tuple)
		if !ok || len(t) != 4 {
			return nil, nil, fmt.Errorf("legacy tar format: storage view %s is not (key, root, offset, size)", pickle.Describe(v))
		}
		root := storages[keyString(t[1])]
		off, ok1 := t[2].(int64)
		num, ok2 := t[3].(int64)
		if root == nil || !ok1 || !ok2 || off < 0 || num < 0 || off > int64(root.numel) || num > int64(root.numel)-off {
			return nil, nil, fmt.Errorf("legacy tar format: storage view %s outside its root", pickle.Describe(v))
		}
		storages[keyString(t[0])] = &storageRef{dtype: root.dtype, root: root.root, start: int(off), numel: int(num)}
	}
	return storages, data, nil
}

// loadAs runs u's next pickle, naming it (what, in format) in an error.
func loadAs(u *pickle.Machine, format, what string) (any, error) {
	v, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", format, what, err)
	}
	return v, nil
}

func int64Tuple(v []int64) pickle.Tuple {
	t := make(pickle.Tuple, len(v))
	for i, x := range v {
		t[i] = x
	}
	return t
}

// keyString is a storage or tensor key (a string or an integer) as a string.
func keyString(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return pickle.Describe(k)
}

// storageDType is the element type of a torch storage class.
func storageDType(class any) (dtype, error) {
	g, ok := class.(*pickle.Global)
	if ok && g.Module == "torch" {
		if name, known := torchStorages[g.Name]; known {
			return dtypes[name], nil
		}
	}
	return dtype{}, fmt.Errorf("storage of type %s (beluga reads torch's float, half, bfloat16, double, integer and bool storages)", pickle.Describe(class))
}

// stateDictAllow is what a state-dict pickle may name, as
// torch.load(weights_only=True) allows: the functions torch.save writes
// for a mapping of tensors (the rebuild functions, OrderedDict, torch.Size,
// _codecs.encode for protocol 2's bytes) and, named but never called, the
// storage and tensor classes.
var stateDictAllow = func() *pickle.AllowList {
	a := &pickle.AllowList{What: "a torch state dict (tensors and the mappings holding them only)", Globals: map[string]pickle.Func{
		"collections.OrderedDict":                    newMapping,
		"builtins.dict":                              newMapping,
		"__builtin__.dict":                           newMapping,
		"torch._utils._rebuild_tensor_v2":            func(args pickle.Tuple) (any, error) { return rebuildTensor(args) },
		"torch._utils._rebuild_tensor":               func(args pickle.Tuple) (any, error) { return rebuildTensor(args) },
		"torch._utils._rebuild_parameter":            rebuildParameter,
		"torch._utils._rebuild_parameter_with_state": rebuildParameter,
		"torch._tensor._rebuild_from_type_v2":        rebuildFromType,
		"torch.Size":                                 torchSize,
		"_codecs.encode":                             codecsEncode,
		"torch.Tensor":                               nil,
		"torch.nn.parameter.Parameter":               nil,
	}}
	for name := range torchStorages {
		// torch ≤ 0.3's tar format names each tensor's class beside it.
		a.Globals["torch."+name] = nil
		a.Globals["torch."+strings.TrimSuffix(name, "Storage")+"Tensor"] = nil
	}
	return a
}()

// newMapping is dict(), OrderedDict() or either of a list of pairs.
func newMapping(args pickle.Tuple) (any, error) {
	d := pickle.NewDict()
	if len(args) > 1 {
		return nil, fmt.Errorf("a mapping made with %d arguments", len(args))
	}
	if len(args) == 1 {
		l, ok := args[0].(*pickle.List)
		if !ok {
			return nil, fmt.Errorf("a mapping made of %s", pickle.TypeName(args[0]))
		}
		for _, it := range l.Items {
			kv, ok := it.(pickle.Tuple)
			if !ok || len(kv) != 2 {
				return nil, fmt.Errorf("mapping item %s is not a pair", pickle.Describe(it))
			}
			if err := d.Set(kv[0], kv[1]); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// rebuildParameter is torch._utils._rebuild_parameter(_with_state): the
// tensor it wraps.
func rebuildParameter(args pickle.Tuple) (any, error) {
	if len(args) < 1 {
		return nil, errors.New("a Parameter without arguments")
	}
	if _, ok := args[0].(*tensorRef); !ok {
		return nil, fmt.Errorf("a Parameter of %s, want a tensor", pickle.TypeName(args[0]))
	}
	return args[0], nil
}

// rebuildFromType is torch._tensor._rebuild_from_type_v2(func, type, args,
// state): a tensor (or Parameter) rebuilt by func.
func rebuildFromType(args pickle.Tuple) (any, error) {
	if len(args) != 4 {
		return nil, fmt.Errorf("_rebuild_from_type_v2 with %d arguments, want 4", len(args))
	}
	fn, ok1 := args[0].(*pickle.Global)
	inner, ok2 := args[2].(pickle.Tuple)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("_rebuild_from_type_v2 of %s and %s", pickle.TypeName(args[0]), pickle.TypeName(args[2]))
	}
	switch cls := pickle.Describe(args[1]); cls {
	case "torch.Tensor", "torch.nn.parameter.Parameter":
	default:
		return nil, fmt.Errorf("_rebuild_from_type_v2: tensor subclass %s", cls)
	}
	v, err := fn.Call(inner)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*tensorRef); !ok {
		return nil, fmt.Errorf("_rebuild_from_type_v2: %s builds a %s, want a tensor", fn, pickle.TypeName(v))
	}
	return v, nil
}

func torchSize(args pickle.Tuple) (any, error) {
	if len(args) == 1 {
		if t, ok := args[0].(pickle.Tuple); ok {
			return t, nil
		}
	}
	return nil, fmt.Errorf("torch.Size of %s", pickle.Describe(args))
}

// codecsEncode is Python 3 bytes pickled at protocol 2: encode(latin-1
// text, "latin1").
func codecsEncode(args pickle.Tuple) (any, error) {
	if len(args) == 2 {
		s, ok1 := args[0].(string)
		enc, ok2 := args[1].(string)
		if ok1 && ok2 && (enc == "latin1" || enc == "latin-1") {
			b, err := pickle.Latin1Bytes(s)
			if err != nil {
				return nil, fmt.Errorf("_codecs.encode: %w", err)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("_codecs.encode of %s", pickle.Describe(args))
}

// rebuildTensor is torch._utils._rebuild_tensor(_v2): (storage, offset,
// size, stride, …), checked against the storage.
func rebuildTensor(args pickle.Tuple) (*tensorRef, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("tensor with %d arguments, want storage, offset, size and stride", len(args))
	}
	s, ok := args[0].(*storageRef)
	if !ok {
		return nil, fmt.Errorf("tensor of a %s, want a storage", pickle.TypeName(args[0]))
	}
	off, ok := args[1].(int64)
	if !ok || off < 0 || off > int64(s.numel) {
		return nil, fmt.Errorf("tensor at storage offset %s of a %d-element storage", pickle.Describe(args[1]), s.numel)
	}
	shape, err := intTuple(args[2], "size")
	if err != nil {
		return nil, err
	}
	stride, err := intTuple(args[3], "stride")
	if err != nil {
		return nil, err
	}
	if len(shape) != len(stride) {
		return nil, fmt.Errorf("tensor of size %v with stride %v", shape, stride)
	}
	n, err := numElements(shape, maxTensorElements)
	if err != nil {
		return nil, err
	}
	if n > s.numel && n > maxExpanded {
		// A view with zero strides (torch's expand) would be copied out
		// whole: 2^31 floats from a one-element storage is a hostile file.
		return nil, fmt.Errorf("tensor of size %v views its %d-element storage with strides %v: %d elements, more than an expanded buffer has", shape, s.numel, stride, n)
	}
	if n > 0 {
		// The last element's index must fall inside the storage.
		last := int(off)
		for k := range shape {
			if stride[k] > maxTensorElements || shape[k]-1 > 0 && stride[k] > (s.numel-last)/(shape[k]-1) {
				return nil, fmt.Errorf("tensor of size %v, stride %v and offset %d reaches past its %d-element storage", shape, stride, off, s.numel)
			}
			last += (shape[k] - 1) * stride[k]
		}
		if last >= s.numel {
			return nil, fmt.Errorf("tensor of size %v, stride %v and offset %d reaches past its %d-element storage", shape, stride, off, s.numel)
		}
	}
	return &tensorRef{storage: s, offset: int(off), shape: shape, stride: stride}, nil
}

func intTuple(v any, what string) ([]int, error) {
	t, ok := v.(pickle.Tuple)
	if !ok {
		return nil, fmt.Errorf("tensor %s %s, want a tuple", what, pickle.Describe(v))
	}
	out := make([]int, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok || n < 0 || n > maxTensorElements {
			return nil, fmt.Errorf("tensor %s %s", what, pickle.Describe(v))
		}
		out[i] = int(n)
	}
	return out, nil
}

// materialise turns an unpickled state dict into tensors, reading each
// storage's bytes through data (the root storage's bytes). Before reading
// any storage or allocating any tensor it adds up what that takes — the
// bytes rootBytes says reading a root storage costs (nil: the roots are in
// memory already) and every tensor's values — and checks the sum against
// lim. A tensor object under two names is refused: torch.save writes each
// tensor of a state dict once (tied weights are two tensors of one
// storage), and the memo would let five thousand names materialise one
// tensor five thousand times.
func materialise(obj any, order binary.ByteOrder, lim limits, rootBytes func(root string) int, data func(*storageRef) ([]byte, error)) (*State, error) {
	d, ok := obj.(*pickle.Dict)
	if !ok {
		return nil, fmt.Errorf("not a state dict: a %s, want a mapping of names to tensors", pickle.TypeName(obj))
	}
	type entry struct {
		name string
		t    *tensorRef
		n    int
	}
	entries := make([]entry, 0, d.Len())
	seen := map[*tensorRef]string{}
	roots := map[string]bool{}
	need, values := 0.0, 0.0
	for i := 0; i < d.Len(); i++ {
		k, v := d.Key(i), d.Value(i)
		name, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("state dict key %s is not a string", pickle.Describe(k))
		}
		t, ok := v.(*tensorRef)
		if !ok {
			hint := ""
			if _, nested := v.(*pickle.Dict); nested {
				hint = " (a training checkpoint? save the model's state_dict())"
			}
			return nil, fmt.Errorf("%q is a %s, not a tensor%s", name, pickle.TypeName(v), hint)
		}
		if prev, dup := seen[t]; dup {
			return nil, fmt.Errorf("%q and %q are one tensor object: a state dict holds each tensor once (tied weights are two tensors of one storage)", prev, name)
		}
		seen[t] = name
		n, _ := numElements(t.shape, maxTensorElements) // checked by rebuildTensor
		need += t.storage.dtype.heldBytes(n)
		values += float64(n)
		if rootBytes != nil && !roots[t.storage.root] {
			roots[t.storage.root] = true
			need += float64(rootBytes(t.storage.root))
		}
		entries = append(entries, entry{name, t, n})
	}
	if err := lim.check(fmt.Sprintf("reading the state dict's %d tensors (%.4g values)", len(entries), values), need); err != nil {
		return nil, err
	}
	st := &State{Weights: Tensors{}, Buffers: Buffers{}}
	for _, e := range entries {
		b, err := data(e.t.storage)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", e.name, err)
		}
		s := e.t.storage
		if len(b) < (s.start+s.numel)*s.dtype.size {
			return nil, fmt.Errorf("tensor %q: storage %s holds %d bytes, %d wanted", e.name, s.root, len(b), (s.start+s.numel)*s.dtype.size)
		}
		ft, bt := gather(s.dtype, b, order, e.t.shape, e.t.stride, s.start+e.t.offset, e.n)
		if ft != nil {
			st.Weights[e.name] = ft
		} else {
			st.Buffers[e.name] = bt
		}
	}
	return st, nil
}
