"""The label-sequence helpers of ``tf.nn``'s CTC family that need no CTC kernel:
``collapse_repeated`` and ``ctc_unique_labels``. Both work on integer label tables on the host
(labels carry no gradient) and return dense tensors padded with 0, as TF's."""
import numpy as np

from ._convert import convert_to_tensor

__all__ = ["collapse_repeated", "ctc_unique_labels"]


def _host(values):
    return np.asarray(values.numpy() if hasattr(values, "numpy") else values)


def collapse_repeated(labels, seq_length, name=None):
    """``tf.nn.collapse_repeated``: each row's runs of a repeated label (within its
    seq_length) merged into one; (labels padded with 0 to the longest result, int32 new
    lengths)."""
    table, lengths = _host(labels), _host(seq_length).astype(np.int64)
    if table.ndim != 2 or lengths.shape != (table.shape[0],):
        raise ValueError(f"collapse_repeated needs (batch, max_len) labels and one length per "
                         f"row, got shapes {table.shape} and {lengths.shape}")
    rows = []
    for row, length in zip(table, lengths):
        kept = row[:length]
        rows.append(kept[np.r_[True, kept[1:] != kept[:-1]]] if length else kept)
    width = max((len(r) for r in rows), default=0)
    out = np.zeros((table.shape[0], width), table.dtype)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return (convert_to_tensor(out),
            convert_to_tensor(np.array([len(r) for r in rows], np.int32)))


def ctc_unique_labels(labels, name=None):
    """``tf.nn.ctc_unique_labels``: per row, (its distinct labels in order of first
    appearance padded with 0, as int64; for each entry its position among them, int32)."""
    table = _host(labels)
    if table.ndim != 2:
        raise ValueError(f"ctc_unique_labels needs (batch, max_len) labels, got shape "
                         f"{table.shape}")
    unique = np.zeros(table.shape, np.int64)
    index = np.zeros(table.shape, np.int32)
    for i, row in enumerate(table):
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        unique[i, :order.size] = row[first[order]]
        index[i] = rank[inverse.reshape(-1)]
    return [convert_to_tensor(unique), convert_to_tensor(index)]
