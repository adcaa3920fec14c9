# Writes small pytorch_model.bin files in every format torch.save has
# written, each holding the same tensors, with expected.json (their names,
# dtypes, shapes and values) for models/checkpoint's reader tests:
#
#   zip-dict.bin     torch.save of a plain dict (as transformers' save_pretrained writes it)
#   zip-ordered.bin  torch.save of nn.Module.state_dict(): an OrderedDict with _metadata
#   zip-param.bin    torch.save of a dict of nn.Parameters (_rebuild_parameter)
#   legacy.bin       torch.save(..., _use_new_zipfile_serialization=False): torch < 1.6's stream
#   tar.bin          torch <= 0.3's tar format, written here by the layout torch.load's
#                    legacy_load reads (torch/serialization.py), and read back by torch.load
#   all-dtypes.safetensors
#                    the same tensors in the safetensors format (contiguous, as
#                    safetensors.torch.save_file requires): every dtype it names, its
#                    header and data written here by its specification and read back
#
# The dict holds every element type torch stores (float32, float16,
# bfloat16, float64, int64, int32, int16, int8, uint8, bool), a
# non-contiguous tensor (a transposed view) and two tensors sharing one
# storage at different offsets.
#
# Run: /usr/bin/python3 models/checkpoint/testdata/torch/gen.py  (torch 1.13)
import collections
import io
import json
import os
import pickle
import struct
import tarfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def tensors():
    g = torch.Generator().manual_seed(7)
    base = torch.randn(4, 6, generator=g)
    shared = torch.arange(12, dtype=torch.float32) / 4
    return collections.OrderedDict([
        ("enc.weight", base),
        ("enc.weight_t", base.t()),                # stride (1, 6)
        ("half", torch.randn(3, 2, generator=g).half()),
        ("bf16", torch.randn(5, generator=g).bfloat16()),
        ("double", torch.randn(2, 2, generator=g).double()),
        ("embeddings.position_ids", torch.arange(7).expand((1, -1))),  # stride (0, 1)
        ("i32", torch.tensor([[-3, 2], [2147483647, -2147483648]], dtype=torch.int32)),
        ("i16", torch.tensor([-32768, 5], dtype=torch.int16)),
        ("i8", torch.tensor([-128, 127], dtype=torch.int8)),
        ("u8", torch.tensor([0, 255, 7], dtype=torch.uint8)),
        ("mask", torch.tensor([True, False, True])),
        ("shared.a", shared[2:6]),                 # storage offset 2
        ("shared.b", shared[6:].view(3, 2)),       # storage offset 6
        ("scalar", torch.tensor(3.5)),
        ("empty", torch.zeros(0, 4)),
    ])


def expected(sd):
    out = {}
    for k, t in sd.items():
        t = t.detach()
        kind = "float" if t.is_floating_point() else "int"
        vals = t.float().reshape(-1).tolist() if kind == "float" else t.long().reshape(-1).tolist()
        out[k] = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "kind": kind, "values": vals}
    return out


class Module(torch.nn.Module):
    def __init__(self, sd):
        super().__init__()
        for k, t in sd.items():
            self.register_buffer("b_" + k.replace(".", "_"), t.clone())


STORAGE = {torch.float32: "FloatStorage", torch.float16: "HalfStorage", torch.bfloat16: "BFloat16Storage",
           torch.float64: "DoubleStorage", torch.int64: "LongStorage", torch.int32: "IntStorage",
           torch.int16: "ShortStorage", torch.int8: "CharStorage", torch.uint8: "ByteStorage",
           torch.bool: "BoolStorage"}
TENSOR = {torch.float32: "FloatTensor", torch.float16: "HalfTensor", torch.bfloat16: "BFloat16Tensor",
          torch.float64: "DoubleTensor", torch.int64: "LongTensor", torch.int32: "IntTensor",
          torch.int16: "ShortTensor", torch.int8: "CharTensor", torch.uint8: "ByteTensor", torch.bool: "BoolTensor"}


class TarPickler(pickle.Pickler):
    """Pickles the state dict with each tensor as the persistent id of its key."""
    def __init__(self, f, ids):
        super().__init__(f, protocol=2)
        self.ids = ids

    def persistent_id(self, obj):
        if isinstance(obj, torch.Tensor) and id(obj) in self.ids:
            return str(self.ids[id(obj)])
        return None


def storage_global(dtype):
    return getattr(torch, STORAGE[dtype])


def write_tar(path, sd):
    """torch <= 0.3's tar format: storages, tensors, pickle (and sys_info)."""
    roots = collections.OrderedDict()  # storage data_ptr -> (key, dtype, bytes)
    tensor_keys = {}
    tensor_records = []
    for k, t in sd.items():
        st = t.storage()
        ptr = st.data_ptr()
        if ptr not in roots:
            roots[ptr] = (len(roots) + 100, t.dtype, untyped_bytes(st))
        key = len(tensor_keys) + 1000
        tensor_keys[id(t)] = key
        tensor_records.append((key, roots[ptr][0], t))

    def dump(f, obj):
        pickle.Pickler(f, protocol=2).dump(obj)

    storages = io.BytesIO()
    dump(storages, len(roots))
    for key, dtype, raw in roots.values():
        # (key, location, storage class): the class pickles as GLOBAL torch <Name>Storage
        dump(storages, (key, "cpu", storage_global(dtype)))
        elem = torch.tensor([], dtype=dtype).element_size()
        storages.write(struct.pack("<q", len(raw) // elem))
        storages.write(raw)
    dump(storages, [])  # no storage views

    tens = io.BytesIO()
    dump(tens, len(tensor_records))
    for key, skey, t in tensor_records:
        dump(tens, (key, skey, getattr(torch, TENSOR[t.dtype])))
        tens.write(struct.pack("<i", t.dim()))
        tens.write(b"\0\0\0\0")
        tens.write(struct.pack("<%dq" % t.dim(), *t.shape))
        tens.write(struct.pack("<%dq" % t.dim(), *t.stride()))
        tens.write(struct.pack("<q", t.storage_offset()))

    main = io.BytesIO()
    TarPickler(main, tensor_keys).dump(collections.OrderedDict(sd))
    sysinfo = io.BytesIO()
    dump(sysinfo, {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 8}})

    with tarfile.open(path, "w:", format=tarfile.PAX_FORMAT) as tar:
        for name, buf in [("sys_info", sysinfo), ("pickle", main), ("storages", storages), ("tensors", tens)]:
            data = buf.getvalue()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def untyped_bytes(storage):
    u = storage._untyped() if hasattr(storage, "_untyped") else storage.untyped()
    return bytes(u.tolist())


SAFETENSORS = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
               torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
               torch.uint8: "U8", torch.bool: "BOOL"}


def write_safetensors(path, sd):
    """The safetensors format: an 8-byte little-endian header length, the JSON
    header (tensors sorted by name, offsets into the data; padded with spaces
    to 8 bytes) and the tensors' little-endian bytes."""
    header, chunks, off = {}, [], 0
    for k in sorted(sd):
        t = sd[k].detach().contiguous().reshape(-1)
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[k] = {"dtype": SAFETENSORS[t.dtype], "shape": list(sd[k].shape), "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))
    # Read back by the same specification.
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    inv = {v: k for k, v in SAFETENSORS.items()}
    for k, e in json.loads(b[8:8 + n]).items():
        s, end = e["data_offsets"]
        raw = bytearray(b[8 + n + s:8 + n + end])
        dt = inv[e["dtype"]]
        back = torch.frombuffer(raw, dtype=torch.uint8).view(dt).reshape(e["shape"]) if raw else torch.zeros(e["shape"], dtype=dt)
        assert back.dtype == sd[k].dtype and torch.equal(back, sd[k]), (path, k)


def check(path, sd):
    back = torch.load(path)
    assert list(back.keys()) == list(sd.keys()), (path, list(back.keys()))
    for k, t in sd.items():
        b = back[k]
        assert b.dtype == t.dtype and b.shape == t.shape and torch.equal(b, t), (path, k)


def main():
    sd = tensors()
    exp = expected(sd)
    files = {}
    p = os.path.join(HERE, "zip-dict.bin")
    torch.save(dict(sd), p)
    files["zip-dict.bin"] = list(sd)
    m = Module(sd)
    osd = m.state_dict()
    assert hasattr(osd, "_metadata")
    p = os.path.join(HERE, "zip-ordered.bin")
    torch.save(osd, p)
    files["zip-ordered.bin"] = list(osd)
    params = collections.OrderedDict((k, torch.nn.Parameter(t.clone(), requires_grad=t.is_floating_point()))
                                     for k, t in sd.items() if t.is_floating_point())
    p = os.path.join(HERE, "zip-param.bin")
    torch.save(params, p)
    files["zip-param.bin"] = list(params)
    p = os.path.join(HERE, "legacy.bin")
    torch.save(sd, p, _use_new_zipfile_serialization=False)
    check(p, sd)
    files["legacy.bin"] = list(sd)
    p = os.path.join(HERE, "tar.bin")
    write_tar(p, sd)
    check(p, sd)
    files["tar.bin"] = list(sd)
    p = os.path.join(HERE, "all-dtypes.safetensors")
    write_safetensors(p, sd)
    files["all-dtypes.safetensors"] = list(sd)
    # The module's buffers are named b_ and the name with _ for .
    exp.update({"b_" + k.replace(".", "_"): v for k, v in list(exp.items())})
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "files": files, "tensors": exp}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
