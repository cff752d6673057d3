"""The XSpace protobuf messages, described in Python, so we can write TensorBoard profiles.

TensorBoard's Profile tab (xprof) reads ``*.xplane.pb`` files: one serialized
``tensorflow.profiler.XSpace``. We build its descriptor at import time with the maintained
protobuf runtime (``descriptor_pb2`` + ``message_factory``) instead of shipping generated code
or needing protoc. Field names and numbers are the public wire format of TSL's xplane.proto; a
test compares this descriptor with TensorFlow's generated one field by field.

The descriptor lives in a private pool, so it never collides with TensorFlow's copy of the
same message names when both are imported in one process.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata",
           "PACKAGE", "FILE_DESCRIPTOR"]

PACKAGE = "tensorflow.profiler"

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_TYPES = {"int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64, "double": _F.TYPE_DOUBLE,
          "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES}

# message -> [(field name, number, type, repeated?, oneof name or None)]; a type that is not a
# scalar names a message of this package. Map fields are listed separately below.
_MESSAGES: dict[str, list[tuple[str, int, str, bool, str | None]]] = {
    "XSpace": [
        ("planes", 1, "XPlane", True, None),
        ("errors", 2, "string", True, None),
        ("warnings", 3, "string", True, None),
        ("hostnames", 4, "string", True, None),
    ],
    "XPlane": [
        ("id", 1, "int64", False, None),
        ("name", 2, "string", False, None),
        ("lines", 3, "XLine", True, None),
        ("stats", 6, "XStat", True, None),
    ],
    "XLine": [
        ("id", 1, "int64", False, None),
        ("display_id", 10, "int64", False, None),
        ("name", 2, "string", False, None),
        ("display_name", 11, "string", False, None),
        ("timestamp_ns", 3, "int64", False, None),
        ("duration_ps", 9, "int64", False, None),
        ("events", 4, "XEvent", True, None),
    ],
    "XEvent": [
        ("metadata_id", 1, "int64", False, None),
        ("offset_ps", 2, "int64", False, "data"),
        ("num_occurrences", 5, "int64", False, "data"),
        ("duration_ps", 3, "int64", False, None),
        ("stats", 4, "XStat", True, None),
    ],
    "XStat": [
        ("metadata_id", 1, "int64", False, None),
        ("double_value", 2, "double", False, "value"),
        ("uint64_value", 3, "uint64", False, "value"),
        ("int64_value", 4, "int64", False, "value"),
        ("str_value", 5, "string", False, "value"),
        ("bytes_value", 6, "bytes", False, "value"),
        ("ref_value", 7, "uint64", False, "value"),
    ],
    "XEventMetadata": [
        ("id", 1, "int64", False, None),
        ("name", 2, "string", False, None),
        ("display_name", 4, "string", False, None),
        ("metadata", 3, "bytes", False, None),
        ("stats", 5, "XStat", True, None),
        ("child_id", 6, "int64", True, None),
    ],
    "XStatMetadata": [
        ("id", 1, "int64", False, None),
        ("name", 2, "string", False, None),
        ("description", 3, "string", False, None),
    ],
}

# XPlane's two maps: (field name, number, entry type name, value message).
_MAPS = [("event_metadata", 4, "EventMetadataEntry", "XEventMetadata"),
         ("stat_metadata", 5, "StatMetadataEntry", "XStatMetadata")]


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="gpuaccel/profiler/xplane.proto",
                                            package=PACKAGE, syntax="proto3")
    for mname, fields in _MESSAGES.items():
        msg = fd.message_type.add(name=mname)
        oneofs: list[str] = []
        for fname, number, ftype, repeated, oneof in fields:
            f = msg.field.add(name=fname, number=number,
                              label=_REPEATED if repeated else _OPTIONAL)
            if ftype in _TYPES:
                f.type = _TYPES[ftype]
            else:
                f.type = _F.TYPE_MESSAGE
                f.type_name = f".{PACKAGE}.{ftype}"
            if oneof is not None:
                if oneof not in oneofs:
                    oneofs.append(oneof)
                    msg.oneof_decl.add(name=oneof)
                f.oneof_index = oneofs.index(oneof)
        if mname == "XPlane":
            for fname, number, entry, value_type in _MAPS:
                nested = msg.nested_type.add(name=entry)
                nested.options.map_entry = True
                nested.field.add(name="key", number=1, label=_OPTIONAL, type=_F.TYPE_INT64)
                nested.field.add(name="value", number=2, label=_OPTIONAL, type=_F.TYPE_MESSAGE,
                                 type_name=f".{PACKAGE}.{value_type}")
                msg.field.add(name=fname, number=number, label=_REPEATED, type=_F.TYPE_MESSAGE,
                              type_name=f".{PACKAGE}.XPlane.{entry}")
    return fd


FILE_DESCRIPTOR = _build_file()
_POOL = descriptor_pool.DescriptorPool()
_FILE = _POOL.Add(FILE_DESCRIPTOR) or _POOL.FindFileByName(FILE_DESCRIPTOR.name)


def _message_class(name: str):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


XSpace = _message_class("XSpace")
XPlane = _message_class("XPlane")
XLine = _message_class("XLine")
XEvent = _message_class("XEvent")
XStat = _message_class("XStat")
XEventMetadata = _message_class("XEventMetadata")
XStatMetadata = _message_class("XStatMetadata")
