"""gpuaccel.dtypes and the core's f16/bf16 conversions, checked against NumPy's float16 (whose
f32<->f16 casts are IEEE round-to-nearest-even) and, for bfloat16, against an exact reference
built here from the IEEE definition (plus ml_dtypes when it is installed).

NaNs: NumPy keeps a NaN's payload as is, while gpuaccel quiets NaNs (sets the quiet bit), so
NaN results are compared as "a NaN with the same sign" and everything else bit for bit.
"""
import pickle

import numpy as np
import pytest

import gpuaccel.dtypes as gd
from gpuaccel import _C

try:
    import ml_dtypes
except ImportError:  # ml_dtypes is optional
    ml_dtypes = None

ALL16 = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
RNG_SEED = 20261122


def f32_bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def assert_16bit_equal(got, want, nan_mask_exp):
    """Bit-equal, except NaN patterns (exponent all ones, mantissa != 0): NaN with same sign."""
    got = np.asarray(got, dtype=np.uint16)
    want = np.asarray(want, dtype=np.uint16)
    got_nan = (got & 0x7FFF) > nan_mask_exp
    want_nan = (want & 0x7FFF) > nan_mask_exp
    np.testing.assert_array_equal(got_nan, want_nan)
    np.testing.assert_array_equal(got[want_nan] & 0x8000, want[want_nan] & 0x8000)
    bad = np.nonzero(~want_nan & (got != want))[0]
    assert bad.size == 0, (
        f"{bad.size} mismatches, first at index {bad[0]}: got {got[bad[0]]:#06x}, "
        f"want {want[bad[0]]:#06x}")


def numpy_f32_to_f16_bits(x):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


# ---------------------------------------------------------------------------- float16 ----

def test_every_f16_pattern_to_f32_matches_numpy():
    got = _C.f16_bits_to_f32(ALL16)
    want = ALL16.view(np.float16).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == (0x10000,)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(f32_bits(got)[~nan], f32_bits(want)[~nan])  # -0 included
    # gpuaccel quiets NaNs: the quiet bit is set, the rest of the payload kept.
    np.testing.assert_array_equal(f32_bits(got)[nan], f32_bits(want)[nan] | 0x00400000)


def test_every_f16_pattern_round_trips():
    back = _C.f32_to_f16_bits(_C.f16_bits_to_f32(ALL16))
    nan = (ALL16 & 0x7FFF) > 0x7C00
    np.testing.assert_array_equal(back[~nan], ALL16[~nan])
    np.testing.assert_array_equal(back[nan], ALL16[nan] | 0x0200)  # quiet NaNs exactly


def f16_test_values():
    """Every f16 value, every midpoint between neighbours and the floats next to it, the
    overflow and underflow boundaries, and random f32 bit patterns (dense near the f16 range)."""
    finite = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    upper = np.append(finite[1:], 65536.0)  # where the next binade would start
    mids = ((finite + upper) / 2).astype(np.float32)
    assert np.array_equal(mids.astype(np.float64), (finite + upper) / 2)  # exact in f32
    inf = np.float32(np.inf)
    near_mids = np.concatenate([mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, inf)])
    special = np.array([0.0, 65504.0, 65519.99, 65520.0, np.nextafter(np.float32(65520), 0),
                        65536.0, 3.4028235e38, np.inf, np.nan, 2.0**-24, 2.0**-25, 2.0**-26,
                        1.5 * 2.0**-24, 2.0**-14, 1023.5 * 2.0**-24, 1e-45, 1e-40],
                       dtype=np.float32)
    rng = np.random.default_rng(RNG_SEED)
    uniform = rng.integers(0, 2**32, size=2_000_000, dtype=np.uint64).astype(np.uint32)
    near = rng.integers(0, 2**32, size=2_000_000, dtype=np.uint64).astype(np.uint32)
    exps = rng.integers(127 - 27, 127 + 18, size=near.size).astype(np.uint32)
    near = (near & np.uint32(0x807FFFFF)) | (exps << np.uint32(23))
    nan_payloads = np.array([0x7F800001, 0x7F801FFF, 0x7FBFFFFF, 0x7FFFFFFF, 0xFF800001],
                            dtype=np.uint32)
    values = np.concatenate([ALL16.view(np.float16).astype(np.float32), near_mids, special,
                             uniform.view(np.float32), near.view(np.float32),
                             nan_payloads.view(np.float32)])
    return np.concatenate([values, -values])


def test_f32_to_f16_matches_numpy():
    values = f16_test_values()
    assert_16bit_equal(_C.f32_to_f16_bits(values), numpy_f32_to_f16_bits(values), 0x7C00)


def test_f16_boundaries_spelled_out():
    conv = lambda *v: list(_C.f32_to_f16_bits(np.array(v, dtype=np.float32)))
    assert conv(65504.0, 65519.99, 65520.0, -65520.0) == [0x7BFF, 0x7BFF, 0x7C00, 0xFC00]
    assert conv(2.0**-24, 2.0**-25, 1.5 * 2.0**-24, -0.0) == [0x0001, 0x0000, 0x0002, 0x8000]
    # A NaN whose kept payload bits are all zero must not become inf.
    nan = np.array([0x7F800001, 0xFF800001], dtype=np.uint32).view(np.float32)
    out = _C.f32_to_f16_bits(nan)
    assert np.all(np.isnan(out.view(np.float16)))
    assert list(out & 0x8000) == [0, 0x8000]


# --------------------------------------------------------------------------- bfloat16 ----

def bf16_reference(x):
    """Exact round-to-nearest-even of float32 values to bfloat16 bits, from the definition:
    decode every non-negative finite bf16 pattern with ldexp, find the neighbours of |x| by
    binary search and compare |x| with their midpoint (exact in float64)."""
    x = np.asarray(x, dtype=np.float32)
    codes = np.arange(0x7F80, dtype=np.int64)
    exp = codes >> 7
    mant = codes & 0x7F
    table = np.where(exp == 0, np.ldexp(mant.astype(np.float64), -133),
                     np.ldexp((mant + 128).astype(np.float64), (exp - 134).astype(np.int32)))
    table = np.append(table, 2.0**128)  # the next binade after the largest finite bf16
    with np.errstate(invalid="ignore"):
        a = np.abs(x.astype(np.float64))
    finite = np.isfinite(a) & (a < 2.0**128)
    idx = np.searchsorted(table, np.where(finite, a, 0.0), side="right") - 1
    idx = np.minimum(idx, 0x7F7F)
    mid = (table[idx] + table[idx + 1]) / 2
    up = (a > mid) | ((a == mid) & (idx % 2 == 1))
    r = np.where(up, idx + 1, idx)
    r = np.where(np.isinf(a) | (~np.isnan(a) & ~finite), 0x7F80, r)
    r = np.where(np.isnan(a), 0x7FC0, r)
    sign = np.where(np.signbit(x), 0x8000, 0)
    return (r | sign).astype(np.uint16)


def test_bf16_reference_sanity():
    # The reference itself on values whose bf16 encoding is known from the format definition.
    # 1 + 2^-8 ties between 1 and 1 + 2^-7 (even: 1); 1 + 3*2^-8 ties up to the even 0x3F82;
    # the largest bf16 (255/128 * 2^127) stays, the midpoint above it ties up to inf.
    x = np.array([1.0, -2.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 255 / 128 * 2.0**127,
                  255.5 / 128 * 2.0**127, np.inf, 2.0**-133, 2.0**-134, 3 * 2.0**-134, 0.0],
                 dtype=np.float32)
    assert list(bf16_reference(x)) == [0x3F80, 0xC000, 0x3F80, 0x3F82, 0x7F7F, 0x7F80, 0x7F80,
                                       0x0001, 0x0000, 0x0002, 0]


def test_every_bf16_pattern_to_f32_and_back():
    f = _C.bf16_bits_to_f32(ALL16)
    nan = (ALL16 & 0x7FFF) > 0x7F80
    want = (ALL16.astype(np.uint32) << 16)
    np.testing.assert_array_equal(f32_bits(f)[~nan], want[~nan])
    assert np.all(np.isnan(f[nan]))
    np.testing.assert_array_equal(np.signbit(f[nan]), (ALL16[nan] & 0x8000) != 0)
    back = _C.f32_to_bf16_bits(f)
    np.testing.assert_array_equal(back[~nan], ALL16[~nan])
    np.testing.assert_array_equal(back[nan], ALL16[nan] | 0x0040)
    if ml_dtypes is not None:
        ref = ALL16.view(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(f32_bits(f)[~nan], f32_bits(ref)[~nan])


def bf16_test_values():
    rng = np.random.default_rng(RNG_SEED + 1)
    uniform = rng.integers(0, 2**32, size=3_000_000, dtype=np.uint64).astype(np.uint32)
    # Every low half-word above, at and below the tie, on a spread of high half-words.
    highs = np.concatenate([np.arange(0, 0x200), np.arange(0x7E00, 0x7F81),
                            rng.integers(0, 0x7F80, size=300)]).astype(np.uint32)
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    grid = ((highs[:, None] << np.uint32(16)) | lows[None, :]).ravel()
    subnormals = rng.integers(0, 0x800000, size=1_000_000).astype(np.uint32)
    bits = np.concatenate([uniform, grid, subnormals])
    bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
    return bits.view(np.float32)


def test_f32_to_bf16_matches_exact_reference():
    values = bf16_test_values()
    got = _C.f32_to_bf16_bits(values)
    assert_16bit_equal(got, bf16_reference(values), 0x7F80)
    if ml_dtypes is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            theirs = values.astype(ml_dtypes.bfloat16).view(np.uint16)
        assert_16bit_equal(got, theirs, 0x7F80)


# ------------------------------------------------------------------ binding behaviour ----

def test_conversions_keep_shape_and_accept_views():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    h = _C.f32_to_f16_bits(x)
    assert h.shape == (3, 4) and h.dtype == np.uint16
    np.testing.assert_array_equal(h, x.astype(np.float16).view(np.uint16))
    strided = x[:, ::2]
    np.testing.assert_array_equal(_C.f32_to_bf16_bits(strided),
                                  bf16_reference(strided).reshape(3, 2))
    assert _C.f16_bits_to_f32(np.zeros((0,), np.uint16)).shape == (0,)


def test_conversions_refuse_float64_instead_of_rounding_twice():
    with pytest.raises(TypeError):
        _C.f32_to_f16_bits(np.array([1.0, 2.0], dtype=np.float64))


# ------------------------------------------------------------------------ DType API ----

EXPECTED = [  # name, itemsize, floating, numpy type
    ("float32", 4, True, np.float32),
    ("float16", 2, True, np.float16),
    ("bfloat16", 2, True, None),
    ("int32", 4, False, np.int32),
    ("int64", 8, False, np.int64),
    ("uint8", 1, False, np.uint8),
    ("bool", 1, False, np.bool_),
    ("float64", 8, True, np.float64),
    ("int8", 1, False, np.int8),
    ("int16", 2, False, np.int16),
]


@pytest.mark.parametrize("name,itemsize,floating,np_type", EXPECTED)
def test_dtype_objects(name, itemsize, floating, np_type):
    d = getattr(gd, name)
    assert isinstance(d, gd.DType)
    assert d.name == name
    assert d.itemsize == itemsize == d.size
    assert d.is_floating_point is floating and d.is_floating is floating
    assert repr(d) == f"gpuaccel.{name}" == str(d)
    assert d == name and not (d != name)
    assert gd.as_dtype(name) is d and gd.as_dtype(d) is d
    assert hash(d) == hash(name)
    assert pickle.loads(pickle.dumps(d)) is d
    if np_type is not None:
        assert d.as_numpy_dtype is np_type
        assert np.dtype(np_type).itemsize == itemsize
        assert d == np_type and d == np.dtype(np_type)
        assert gd.as_dtype(np_type) is d and gd.as_dtype(np.dtype(np_type)) is d
    for other_name, *_ in EXPECTED:
        if other_name != name:
            assert d != getattr(gd, other_name) and d != other_name


def test_bfloat16_numpy_type_is_optional():
    if ml_dtypes is None:
        assert gd.bfloat16.as_numpy_dtype is None
    else:
        assert gd.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16
        assert gd.as_dtype(ml_dtypes.bfloat16) is gd.bfloat16
        assert gd.bfloat16 == np.dtype(ml_dtypes.bfloat16)


def test_names_match_the_core():
    assert _C.dtype_names() == [e[0] for e in EXPECTED]
    assert set(gd.__all__) == {"DType", "as_dtype", "double", "short", *_C.dtype_names()}
    assert isinstance(gd.__all__, tuple)


@pytest.mark.parametrize("alias,name", [("half", "float16"), ("float", "float32"),
                                        ("f16", "float16"), ("f32", "float32"),
                                        ("bf16", "bfloat16")])
def test_aliases(alias, name):
    assert gd.as_dtype(alias) is getattr(gd, name)
    assert getattr(gd, name) == alias


def test_python_types():
    assert gd.as_dtype(float) is gd.float32  # as TF does
    assert gd.as_dtype(bool) is gd.bool
    assert gd.as_dtype(np.bool_) is gd.bool


@pytest.mark.parametrize("bad", ["uint16", "Float32", "", np.uint16, np.dtype("complex64"),
                                 None, 3, object()])
def test_bad_dtypes_raise_value_error_listing_valid_names(bad):
    with pytest.raises(ValueError) as info:
        gd.as_dtype(bad)
    message = str(info.value)
    for name in _C.dtype_names():
        assert name in message
    if isinstance(bad, str):
        assert f"'{bad}'" in message
    assert gd.float32 != bad


def test_core_parse_error_is_value_error():
    with pytest.raises(ValueError, match="'uint16'"):
        _C.parse_dtype("uint16")
