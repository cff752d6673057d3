"""``tf.train.Example`` and its parts (``Features``, ``Feature``, ``BytesList``, ``FloatList``,
``Int64List``, ``SequenceExample``, ``FeatureList``, ``FeatureLists``) as real protobuf messages.

Why it exists: TFRecord files of course data hold serialized ``tensorflow.Example`` messages, and
code writes and reads them with these classes. Their schema (TensorFlow's example.proto and
feature.proto: message and field names, numbers, types) is described here as a
``FileDescriptorProto`` and turned into message classes at import, so no generated code is
shipped and the bytes are TensorFlow's, byte for byte.

The classes live in a private ``DescriptorPool``: TensorFlow registers the same file names in
protobuf's default pool when it is imported, and two definitions of one file in one pool clash.
The wire format does not depend on the pool, so ``tf.train.Example.FromString(ours)`` and
``ours.FromString(tf_bytes)`` both work; only ``isinstance`` across the two libraries does not.
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample"]

_F = descriptor_pb2.FieldDescriptorProto


def _field(message, name, number, type_, label=_F.LABEL_OPTIONAL, type_name=None, packed=False,
           oneof_index=None):
    field = message.field.add(name=name, number=number, type=type_, label=label)
    if type_name is not None:
        field.type_name = type_name
    if packed:
        field.options.packed = True
    if oneof_index is not None:
        field.oneof_index = oneof_index
    return field


def _map_field(message, name, value_type):
    """A ``map<string, value_type> name = 1`` field: protobuf's nested ``<Name>Entry`` message."""
    entry_name = "".join(part.capitalize() for part in name.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(message, name, 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=f".{message_full_name(message)}.{entry_name}")


def message_full_name(message):
    return f"tensorflow.{message.name}"


def _feature_file():
    """tensorflow/core/example/feature.proto."""
    file = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/feature.proto",
                                              package="tensorflow", syntax="proto3")
    _field(file.message_type.add(name="BytesList"), "value", 1, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    _field(file.message_type.add(name="FloatList"), "value", 1, _F.TYPE_FLOAT, _F.LABEL_REPEATED,
           packed=True)
    _field(file.message_type.add(name="Int64List"), "value", 1, _F.TYPE_INT64, _F.LABEL_REPEATED,
           packed=True)
    feature = file.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, type_name) in enumerate(
            [("bytes_list", "BytesList"), ("float_list", "FloatList"),
             ("int64_list", "Int64List")], start=1):
        _field(feature, name, number, _F.TYPE_MESSAGE, type_name=f".tensorflow.{type_name}",
               oneof_index=0)
    _map_field(file.message_type.add(name="Features"), "feature", ".tensorflow.Feature")
    _field(file.message_type.add(name="FeatureList"), "feature", 1, _F.TYPE_MESSAGE,
           _F.LABEL_REPEATED, type_name=".tensorflow.Feature")
    _map_field(file.message_type.add(name="FeatureLists"), "feature_list",
               ".tensorflow.FeatureList")
    return file


def _example_file():
    """tensorflow/core/example/example.proto."""
    file = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto",
                                              package="tensorflow", syntax="proto3",
                                              dependency=["tensorflow/core/example/feature.proto"])
    _field(file.message_type.add(name="Example"), "features", 1, _F.TYPE_MESSAGE,
           type_name=".tensorflow.Features")
    sequence = file.message_type.add(name="SequenceExample")
    _field(sequence, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(sequence, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")
    return file


_pool = descriptor_pool.DescriptorPool()
_pool.Add(_feature_file())
_pool.Add(_example_file())


def _message_class(name):
    return message_factory.GetMessageClass(_pool.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _message_class("BytesList")
FloatList = _message_class("FloatList")
Int64List = _message_class("Int64List")
Feature = _message_class("Feature")
Features = _message_class("Features")
FeatureList = _message_class("FeatureList")
FeatureLists = _message_class("FeatureLists")
Example = _message_class("Example")
SequenceExample = _message_class("SequenceExample")
