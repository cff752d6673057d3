"""No pybind11 text reaches a user: every function, method and property setter of ``_C`` is
wrapped so that pybind11's own argument errors ("incompatible function arguments", "Unable to
cast Python instance ...") become a ``TypeError`` that names the function, the argument, what
it got and what it accepts::

    [binary] argument 'y' must be Tensor, got float 2.5 (binary(op: str, x: Tensor, y: Tensor))

This is the safety net behind the Python faces, which validate the arguments users write
(axes, shapes, numbers) with TensorFlow's and PyTorch's errors before they reach ``_C``; a
binding that converts a loose argument itself uses ``cpp/bindings/arguments.h``. Errors that
are not pybind11's pass through untouched, and the wrapper costs one Python call frame.
"""
import functools
import numbers
import re

import numpy as np

_MARKERS = ("incompatible function arguments", "incompatible constructor arguments",
            "Unable to cast", "Unable to convert")
_SIGNATURE = re.compile(r"^(?:\d+\.\s+)?(?P<name>\w+)\((?P<params>.*)\)(?:\s*->\s*(?P<ret>.+))?$")


def _is_pybind_error(error):
    text = str(error)
    return any(marker in text for marker in _MARKERS)


def _split_top_level(text, separator=","):
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return parts


def _signatures(fn, name):
    """[(params [(name, type)], required names, display text)] of each overload in fn's
    pybind11 docstring."""
    out = []
    for line in (getattr(fn, "__doc__", None) or "").splitlines():
        match = _SIGNATURE.match(line.strip())
        if not match or match.group("name") != name or match.group("params") == "*args, **kwargs":
            continue
        params, required = [], set()
        for part in _split_top_level(match.group("params")):
            part, has_default, _ = part.partition("=")
            part = part.strip()
            if part in ("*", "/") or not part:
                continue
            pname, _, ptype = part.partition(":")
            params.append((pname.strip(), ptype.strip() or "object"))
            if not has_default:
                required.add(pname.strip())
        display = ", ".join(f"{n}: {_pretty(t)}" for n, t in params if n != "self")
        out.append((params, required, f"({display})"))
    return out


def _pretty(type_text):
    text = re.sub(r"\bgpuaccel\._C\.(?:\w+\.)*", "", type_text)
    text = re.sub(r"typing\.Supports(Int|Index)", "int", text)
    text = re.sub(r"typing\.SupportsFloat", "float", text)
    text = re.sub(r"collections\.abc\.Sequence", "sequence", text)
    text = re.sub(r"typing\.Optional\[(.*)\]", r"\1 | None", text)
    parts = _split_top_level(text.replace("typing.", ""), "|")
    return " | ".join(dict.fromkeys(parts))  # "int | int" (SupportsInt | SupportsIndex): once


def _matches(value, type_text):
    """False only when ``value`` certainly is not of the (pybind11 docstring) type."""
    type_text = type_text.strip()
    optional = re.fullmatch(r"typing\.Optional\[(.*)\]", type_text)
    if optional:
        return value is None or _matches(value, optional.group(1))
    alternatives = _split_top_level(type_text, "|")
    if len(alternatives) > 1:
        return any(_matches(value, t) for t in alternatives)
    if type_text == "None":
        return value is None
    if type_text in ("int", "typing.SupportsInt", "typing.SupportsIndex"):
        return isinstance(value, (numbers.Integral, np.integer)) or (
            hasattr(value, "__index__") and not isinstance(value, (float, np.floating)))
    if type_text in ("float", "typing.SupportsFloat"):
        return isinstance(value, (numbers.Real, np.number))
    if type_text == "bool":
        return isinstance(value, (bool, np.bool_))
    if type_text == "str":
        return isinstance(value, str)
    sequence = re.fullmatch(r"(?:list|collections\.abc\.Sequence|typing\.Sequence)\[(.*)\]",
                            type_text)
    if sequence:
        if not isinstance(value, (list, tuple)):
            return False
        return all(_matches(v, sequence.group(1)) for v in value)
    fixed = re.fullmatch(r"tuple\[(.*)\]", type_text)
    if fixed:
        items = _split_top_level(fixed.group(1))
        if not isinstance(value, (list, tuple)) or len(value) != len(items):
            return False
        return all(_matches(v, t) for v, t in zip(value, items))
    cls = re.fullmatch(r"gpuaccel\._C\.(?:\w+\.)*(\w+)", type_text)
    if cls:
        return any(base.__name__ == cls.group(1) for base in type(value).__mro__)
    return True  # a type we do not model: assume it matched


def _describe(value):
    # A pybind11 object may be the half-constructed `self` of a failing __init__, whose repr
    # would read uninitialized memory: only its type is shown.
    if type(type(value)).__name__ == "pybind11_type":
        return type(value).__name__
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 -- the message must not fail on an odd repr
        text = "<unprintable>"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _ordinal(i):
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(i, f"{i}th")


_MISSING = object()  # the "value" of a required argument the call did not give


def _first_mismatch(params, required, args, kwargs):
    """(name, position or None, type, value) of the first argument that certainly does not
    match the overload's ``params`` (value _MISSING: a required one not given); None when
    every one may match."""
    for index, ((pname, ptype), value) in enumerate(zip(params, args), start=1):
        if not _matches(value, ptype):
            shown = index - 1 if params and params[0][0] == "self" else index
            return pname, shown, ptype, value
    by_name = dict(params)
    for key, value in kwargs.items():
        if not _matches(value, by_name[key]):
            return key, None, by_name[key], value
    for index, (pname, ptype) in enumerate(params[len(args):], start=len(args) + 1):
        if pname in required and pname not in kwargs:
            shown = index - 1 if params and params[0][0] == "self" else index
            return pname, shown, ptype, _MISSING
    return None


def _rewrite(fn, name, doc_name, args, kwargs, error):
    """The TypeError for a call pybind11 refused. An argument is blamed only when it is the one
    every overload the call could mean refuses; otherwise the message lists the overloads and
    says which argument each one refuses (or that none is of a wrong type, when a value does
    not fit the C++ type, e.g. an int beyond 64 bits)."""
    signatures = _signatures(fn, doc_name)
    refusals = []  # (overload number, display, first mismatch) of the overloads the call fits
    for number, (params, required, display) in enumerate(signatures, start=1):
        if len(args) > len(params) or any(k not in dict(params) for k in kwargs):
            continue  # not this overload: too many or unknown arguments
        refusals.append((number, display, _first_mismatch(params, required, args, kwargs)))
    blamed = {(m[0], m[1]) for _, _, m in refusals if m is not None}
    if refusals and all(m is not None for _, _, m in refusals) and len(blamed) == 1:
        pname, position, _, value = refusals[0][2]
        types = " or ".join(dict.fromkeys(_pretty(m[2]) for _, _, m in refusals))
        expected = " or ".join(name + display for _, display, _ in refusals)
        where = f" ({_ordinal(position)})" if position is not None else ""
        if value is _MISSING:
            return TypeError(f"[{name}] missing argument '{pname}'{where} (expected "
                             f"{expected})")
        return TypeError(f"[{name}] argument '{pname}'{where} must be {types}, got "
                         f"{_describe(value)} (expected {expected})")
    method = doc_name != name or any(p and p[0][0] == "self" for p, _, _ in signatures)
    shown = args[1:] if method and args else args
    got = [_describe(a) for a in shown] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
    numbered = len(signatures) > 1
    expected = " or ".join(f"{f'{n}. ' if numbered else ''}{name}{display}"
                           for n, (_, _, display) in enumerate(signatures, start=1))
    expected = expected or f"{name}(...)"
    detail = ""
    cast = re.search(r"instance of type <class '([\w.]+)'>", str(error))
    if cast:
        detail = f"a value of type {cast.group(1)} could not be converted; "
    fitting = [n for n, _, m in refusals if m is None]
    if fitting:
        which = f"overload {fitting[0]} takes" if numbered else "the function takes"
        detail += (f"{which} every argument's type, so a value does not fit its C++ type (an "
                   "int beyond its range, say); ")
    elif len(blamed) > 1:
        detail += "no single argument is to blame (" + ", ".join(
            f"overload {n} refuses '{m[0]}'" for n, _, m in refusals) + "); "
    return TypeError(f"[{name}] invalid arguments: {detail}got ({', '.join(got)}); "
                     f"expected {expected}")


def _wrap(fn, name, doc_name=None):
    """``fn`` with pybind11's argument errors rewritten; ``name`` is what messages call it,
    ``doc_name`` the name its docstring signatures carry (``__init__`` for a constructor)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, RuntimeError) as error:
            if not _is_pybind_error(error):
                raise
            raise _rewrite(fn, name, doc_name or name, args, kwargs, error) from None
    wrapper.__wrapped_binding__ = fn
    return wrapper


def _is_binding_function(obj):
    return type(obj).__name__ in ("builtin_function_or_method", "instancemethod") and \
        not hasattr(obj, "__wrapped_binding__")


def _wrap_class(cls):
    for attr, value in list(vars(cls).items()):
        if attr.startswith("__") and attr != "__init__":
            continue
        if type(value).__name__ == "instancemethod" or (
                attr == "__init__" and type(value).__name__ in ("instancemethod",
                                                                "builtin_function_or_method")):
            setattr(cls, attr, _wrap(value.__func__ if hasattr(value, "__func__") else value,
                                     attr if attr != "__init__" else cls.__name__, attr))
        elif isinstance(value, staticmethod) and _is_binding_function(value.__func__):
            setattr(cls, attr, staticmethod(_wrap(value.__func__, attr)))
        elif isinstance(value, property) and value.fset is not None and \
                not hasattr(value.fset, "__wrapped_binding__"):
            setattr(cls, attr, property(value.fget, _wrap(value.fset, attr), value.fdel,
                                        value.__doc__))


def install(module, _seen=None):
    """Wraps, in place, every function of ``module`` (the ``_C`` extension), its submodules
    and the classes they define. Idempotent."""
    seen = _seen if _seen is not None else set()
    if id(module) in seen:
        return
    seen.add(id(module))
    for attr, value in list(vars(module).items()):
        if attr.startswith("__"):
            continue
        if _is_binding_function(value):
            setattr(module, attr, _wrap(value, attr))
        elif type(value).__name__ == "module" and value.__name__.startswith(module.__name__):
            install(value, seen)
        elif isinstance(value, type) and type(value).__name__ == "pybind11_type":
            _wrap_class(value)
