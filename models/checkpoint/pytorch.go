package checkpoint

import (
	"fmt"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// ReadPyTorch reads a pytorch_model.bin state dict (torch.save's zip
// format) as float32 tensors, honouring storage offsets and strides.
func ReadPyTorch(path string) (ts Tensors, err error) {
	defer func() {
		// gopickle indexes without bounds checks on some corrupt inputs.
		if r := recover(); r != nil {
			ts, err = nil, fmt.Errorf("pytorch %s: malformed file: %v", path, r)
		}
	}()
	// gopickle falls back to PyTorch's pre-1.6 format for anything that is
	// not a zip archive, and that reader can loop forever on a truncated
	// file: only zip archives (torch.save since 1.6) are accepted.
	// checkPyTorch also bounds every allocation gopickle is about to make.
	if err := checkPyTorch(path); err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", path, err)
	}
	obj, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", path, err)
	}
	od, ok := obj.(*types.OrderedDict)
	if !ok {
		return nil, fmt.Errorf("pytorch %s: not a state dict (%T)", path, obj)
	}
	ts = Tensors{}
	for e := od.List.Front(); e != nil; e = e.Next() {
		entry := e.Value.(*types.OrderedDictEntry)
		name, _ := entry.Key.(string)
		pt, ok := entry.Value.(*pytorch.Tensor)
		if !ok {
			return nil, fmt.Errorf("pytorch %s: %q is not a tensor (%T)", path, name, entry.Value)
		}
		t, err := fromPyTorch(pt)
		if err != nil {
			return nil, fmt.Errorf("pytorch %s: tensor %q: %w", path, name, err)
		}
		ts[name] = t
	}
	return ts, nil
}

func fromPyTorch(pt *pytorch.Tensor) (*Tensor, error) {
	var data []float32
	switch s := pt.Source.(type) {
	case *pytorch.FloatStorage:
		data = s.Data
	case *pytorch.HalfStorage:
		data = s.Data
	default:
		return nil, fmt.Errorf("unsupported storage %T", pt.Source)
	}
	shape := append([]int{}, pt.Size...)
	out := &Tensor{Shape: shape, Data: make([]float32, NumElements(shape))}
	if len(out.Data) == 0 {
		return out, nil
	}
	// Walk the index space in row-major order, reading through the strides.
	idx := make([]int, len(shape))
	for i := range out.Data {
		off := pt.StorageOffset
		for d, k := range idx {
			off += k * pt.Stride[d]
		}
		if off < 0 || off >= len(data) {
			return nil, fmt.Errorf("element %d at storage offset %d outside %d values", i, off, len(data))
		}
		out.Data[i] = data[off]
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}
