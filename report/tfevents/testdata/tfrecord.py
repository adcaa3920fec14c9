"""Independent TensorBoard event-file writer and reader for package tfevents'
tests, with Debian's python3-protobuf (TensorBoard itself is not packaged in
Debian). The Event / Summary messages are built at run time from a
FileDescriptorProto with tensorflow/core/util/event.proto's and
tensorflow/core/framework/summary.proto's field numbers, and the TFRecord
framing with TensorFlow's masked CRC-32C is implemented here from its
definition.

  /usr/bin/python3 tfrecord.py write python.tfevents   # the golden file
  /usr/bin/python3 tfrecord.py read FILE               # prints the events as JSON
"""
import json
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def build():
    fd = descriptor_pb2.FileDescriptorProto(name="tb_event.proto", package="tensorflow", syntax="proto3")
    value = fd.message_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL, oneof_index=0)
    value.oneof_decl.add(name="value")
    summary = fd.message_type.add(name="Summary")
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, type_name=".tensorflow.Value", label=F.LABEL_REPEATED)
    event = fd.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, type_name=".tensorflow.Summary", label=F.LABEL_OPTIONAL, oneof_index=0)
    event.oneof_decl.add(name="what")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:
        return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("tensorflow.Event"))
    return get(pool.FindMessageTypeByName("tensorflow.Event"))


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked(head)) + data + struct.pack("<I", masked(data))


def read(path):
    Event = build()
    b = open(path, "rb").read()
    out, i = [], 0
    while i < len(b):
        (n,) = struct.unpack_from("<Q", b, i)
        assert struct.unpack_from("<I", b, i + 8)[0] == masked(b[i:i + 8]), "length crc"
        data = b[i + 12:i + 12 + n]
        assert struct.unpack_from("<I", b, i + 12 + n)[0] == masked(data), "data crc"
        ev = Event()
        ev.ParseFromString(data)
        out.append({"wall_time": ev.wall_time, "step": ev.step, "file_version": ev.file_version,
                    "values": [{"tag": v.tag, "simple_value": v.simple_value} for v in ev.summary.value]})
        i += 16 + n
    return out


# The scalars of the Go test (tfevents_test.go): three steps of a curve.
START = 1700000000.5
SCALARS = [("loss/mft", 1, 0.6931), ("lr", 1, 2e-5), ("loss/inv", 2, 0.25), ("lr", 2, 1e-5), ("loss/dir", 3, 1.5)]


def write(path):
    Event = build()
    out = record(Event(wall_time=START, file_version="brain.Event:2").SerializeToString())
    for tag, step, v in SCALARS:
        ev = Event(wall_time=START, step=step)
        ev.summary.value.add(tag=tag, simple_value=v)
        out += record(ev.SerializeToString())
    open(path, "wb").write(out)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        print(json.dumps(read(sys.argv[2]), indent=1))
