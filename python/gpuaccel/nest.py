"""``tf.nest``: flatten, rebuild and map over nested lists, tuples, namedtuples and dicts.

TF code passes structures of tensors around (``tf.while_loop``'s loop variables, a model's
dict of inputs), and gpuaccel's control flow (``_tf_control_flow``) walks them the same way, so
the rules are TensorFlow's: dict entries come in sorted key order (an OrderedDict's too, as TF),
a namedtuple is a sequence of its fields, ``None``, strings and arrays are leaves, and two
structures match when their sequence types, lengths and dict keys agree.
"""

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure", "is_nested"]


def is_nested(seq):
    """Whether ``seq`` is a list, tuple (namedtuple included) or dict: a structure, not a leaf."""
    return isinstance(seq, (list, tuple, dict))


def _children(structure):
    if isinstance(structure, dict):
        return [structure[key] for key in sorted(structure)]
    return list(structure)


def flatten(structure, expand_composites=False):
    """The leaves of ``structure``, depth first (dicts by sorted key)."""
    if not is_nested(structure):
        return [structure]
    leaves = []
    for child in _children(structure):
        leaves.extend(flatten(child))
    return leaves


def _rebuilt(structure, children):
    """``structure``'s container (list, tuple, namedtuple or dict) holding ``children``."""
    if isinstance(structure, dict):
        by_key = dict(zip(sorted(structure), children))
        return type(structure)((key, by_key[key]) for key in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*children)
    return type(structure)(children)


def _packed(structure, leaves):
    if not is_nested(structure):
        return next(leaves)
    return _rebuilt(structure, [_packed(child, leaves) for child in _children(structure)])


def pack_sequence_as(structure, flat_sequence, expand_composites=False, sequence_fn=None):
    """``structure`` with its leaves replaced, in order, by ``flat_sequence``'s entries."""
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but "
                         f"flat_sequence had {len(flat)} items.  Structure: {structure}, "
                         f"flat_sequence: {flat}.")
    return _packed(structure, iter(flat))


def _sequence_kind(value):
    return "dict" if isinstance(value, dict) else type(value).__name__


def _mismatch(first, second, check_types):
    """Why two structures differ (error class, text), or None where they match."""
    if is_nested(first) != is_nested(second):
        return ValueError, (f"The two structures don't have the same nested structure. One is "
                            f"a leaf and the other a sequence: {first!r} and {second!r}")
    if not is_nested(first):
        return None
    if check_types and type(first) is not type(second) and not (
            isinstance(first, dict) and isinstance(second, dict)):
        return TypeError, (f"The two structures don't have the same sequence type: "
                           f"{first!r} has type {_sequence_kind(first)}, while {second!r} has "
                           f"type {_sequence_kind(second)}")
    if isinstance(first, dict) and isinstance(second, dict) and sorted(first) != sorted(second):
        return ValueError, (f"The two dictionaries don't have the same set of keys: "
                            f"{sorted(first)} and {sorted(second)}")
    if len(first) != len(second):
        return ValueError, (f"The two structures don't have the same number of elements: "
                            f"{first!r} has {len(first)} and {second!r} has {len(second)}")
    for a, b in zip(_children(first), _children(second)):
        found = _mismatch(a, b, check_types)
        if found:
            return found
    return None


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raises ValueError (different nesting, lengths or keys) or TypeError (different sequence
    types, with ``check_types``) unless the two structures match."""
    found = _mismatch(nest1, nest2, check_types)
    if found:
        error, text = found
        raise error(f"The two structures don't have the same nested structure.\n\nFirst "
                    f"structure: {nest1!r}\n\nSecond structure: {nest2!r}\n\nMore "
                    f"specifically: {text}")


def map_structure(func, *structure, **kwargs):
    """``func`` applied to the matching leaves of the structures, in the first one's shape."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    columns = zip(*(flatten(s) for s in structure))
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in columns])
