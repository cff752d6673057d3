"""How a tensor's values print, by PyTorch's rules, and ``torch.set_printoptions``.

A printed tensor is what students read most; PyTorch's course material shows its layout
(``tensor([1.0000, 2.5000])``: a common precision, right-aligned columns, integers as ``1.``,
scientific notation when magnitudes span more than 1000x, ``...`` past ``threshold`` elements,
lines wrapped at ``linewidth``), so gpuaccel's repr lays the values out the same way, and
``set_printoptions`` (precision, threshold, edgeitems, linewidth, profile, sci_mode) changes it
as PyTorch's does. Only the values' text is PyTorch's: the repr's suffix always names the dtype
(``dtype=float32``), since the same tensor class serves the TensorFlow face (see _tensor._repr).
"""
import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "format_values"]

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}

_options = dict(_PROFILES["default"], sci_mode=None)


def get_printoptions():
    """The current options as a dict (a copy: pass it back to set_printoptions to restore)."""
    return dict(_options)


def _count(value, name):
    # threshold may be float('inf') (the 'full' profile's); the others are counts of characters
    # or elements
    allowed = (int, float) if name == "threshold" else (int,)
    if isinstance(value, bool) or not isinstance(value, allowed) or value < 0:
        kind = "a number" if name == "threshold" else "an int"
        raise TypeError(f"set_printoptions: {name} must be {kind} >= 0, got "
                        f"{type(value).__name__} {value!r}")
    return value


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """``torch.set_printoptions``: ``profile`` ('default', 'short', 'full') first, then each
    option given. ``sci_mode`` is always set: True or False forces scientific notation on or
    off, None (the default) lets each tensor's values decide."""
    updates = {}
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        updates.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            updates[name] = _count(value, name)
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions: sci_mode must be True, False or None, got "
                        f"{sci_mode!r}")
    _options.update(updates, sci_mode=sci_mode)  # all checked first: a bad value changes none


class _Formatter:
    """One width and notation for every element of a tensor (PyTorch's _Formatter): floats that
    are all integers print as ``3.``; magnitudes spanning over 1000x, above 1e8 or (for
    non-integers) below 1e-4 switch to scientific notation."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        precision = _options["precision"]
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max([self.width] + [len(str(v)) for v in flat.tolist()])
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size:
                magnitudes = np.abs(finite)
                low, high = magnitudes.min(), magnitudes.max()
                self.int_mode = bool((finite == np.ceil(finite)).all())
                self.sci_mode = high / low > 1000.0 or high > 1.0e8 or (
                    not self.int_mode and low < 1.0e-4)
                if self.sci_mode:
                    texts = [f"{v:.{precision}e}" for v in finite.tolist()]
                elif self.int_mode:
                    texts = [f"{v:.0f}." for v in finite.tolist()]
                else:
                    texts = [f"{v:.{precision}f}" for v in finite.tolist()]
                self.width = max(len(t) for t in texts)
        if _options["sci_mode"] is not None:
            self.sci_mode = _options["sci_mode"]

    def format(self, value):
        precision = _options["precision"]
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{precision}f}"
        return text.rjust(self.width)


def _edge_rows(values):
    """The first and last ``edgeitems`` entries of axis 0 (all of them when there are few)."""
    edge = _options["edgeitems"]
    if len(values) > 2 * edge:
        return np.concatenate([values[:edge], values[len(values) - edge:]])
    return values


def _summarized(values):
    """Only the elements a summarized print shows (PyTorch's get_summarized_data), so they
    alone decide the width and notation."""
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        return _edge_rows(values)
    return np.stack([_summarized(row) for row in _edge_rows(values)])


def _vector(values, indent, summarize, formatter):
    per_line = max(1, int((_options["linewidth"] - indent) // (formatter.width + 2)))
    edge = _options["edgeitems"]
    if summarize and not edge:
        texts = ["..."]
    elif summarize and len(values) > 2 * edge:
        texts = ([formatter.format(v) for v in values[:edge].tolist()] + [" ..."] +
                 [formatter.format(v) for v in values[len(values) - edge:].tolist()])
    else:
        texts = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, formatter):
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    edge = _options["edgeitems"]
    if summarize and len(values) > 2 * edge:
        rows = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(edge)] +
                ["..."] +
                [_nested(values[i], indent + 1, summarize, formatter)
                 for i in range(len(values) - edge, len(values))])
    else:
        rows = [_nested(row, indent + 1, summarize, formatter) for row in values]
    return ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows).join("[]")


def format_values(values, indent):
    """The text of ``values`` (a NumPy array: bool, integers or float32 -- half precision
    widened first, as PyTorch prints it) inside a repr whose first line is indented by
    ``indent`` characters."""
    if values.size == 0:
        return "[]"
    summarize = values.size > _options["threshold"]
    formatter = _Formatter(_summarized(values) if summarize else values)
    return _nested(values, indent, summarize, formatter)


def add_suffixes(text, suffixes, indent):
    """``text`` closed with its ``name=value`` suffixes, each on a new line where it would pass
    ``linewidth`` (PyTorch's _add_suffixes)."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > _options["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
