"""The ``tf.io`` names of TFRecord files, ``tf.train.Example`` parsing, tensor bytes and CSV
decoding, gathered in one place for ``gpuaccel.io`` to re-export (``from ._io_records import *``).

Why a module of its own: ``gpuaccel.io`` (files, gfile, image codecs) is assembled elsewhere;
this keeps the record formats' names in one list that the namespace takes as a whole.
``tf_record_iterator`` is TF 2's ``tf.compat.v1.io.tf_record_iterator`` (tutorials still call it
as ``tf.io.tf_record_iterator``, which TF 2.21 no longer has; gpuaccel answers both).
"""
from ._csv import decode_csv
from ._example_parsing import (FixedLenFeature, FixedLenSequenceFeature, RaggedFeature,
                               SparseFeature, VarLenFeature, parse_example, parse_single_example)
from ._tensor_bytes import decode_raw, parse_tensor, serialize_tensor
from ._tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator",
           "FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature",
           "RaggedFeature", "parse_single_example", "parse_example", "serialize_tensor",
           "parse_tensor", "decode_raw", "decode_csv"]
