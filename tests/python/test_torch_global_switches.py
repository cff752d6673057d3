"""The PyTorch face's global switches compared with PyTorch 1.13 (torch_reference): Generator,
set_printoptions, memory formats, thread counts, deterministic algorithms, float32 matmul
precision, torch.backends flags and torch.functional. Every test restores what it changes
(the suite runs in a random order)."""
import contextlib
import re
import warnings

import numpy as np
import pytest

import gpuaccel
import gpuaccel.torch as torch
from gpuaccel import _tensor_print
from runtime_fixtures import fresh_runtime  # noqa: F401
import torch_reference

# Tensors whose repr both sides print, built from the same NumPy values.
PRINTED = {
    "mixed": "np.array([[1.0, 2.5], [-3.0, 4.0]], np.float32)",
    "integral floats": "np.array([1.0, -20.0, 300.0], np.float32)",
    "wide range": "np.array([1e-5, 1.0, 123.456], np.float32)",
    "large": "np.array([1e9, 2.0], np.float32)",
    "long vector": "np.arange(5000, dtype=np.float32) / 7",
    "matrix": "(np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 30) / 9",
    "big 3d": "np.arange(4000, dtype=np.float32).reshape(10, 20, 20)",
    "nonfinite": "np.array([np.inf, -np.inf, np.nan, 1.5], np.float32)",
    "ints": "np.array([[1, -22], [333, 4]], np.int64)",
    "bools": "np.array([True, False])",
    "scalar": "np.array(3.25, np.float32)",
    "empty": "np.zeros((0, 3), np.float32)",
}
# The option settings each tensor is printed under (keyword arguments of set_printoptions).
PRINT_OPTIONS = {
    "defaults": {},
    "precision 2": dict(precision=2),
    "threshold 5 edgeitems 1": dict(threshold=5, edgeitems=1),
    "linewidth 30": dict(linewidth=30),
    "sci_mode off": dict(sci_mode=False),
    "sci_mode on": dict(sci_mode=True, precision=3),
    "profile short": dict(profile="short"),
    "profile full": dict(profile="full"),
}

REFERENCE = r"""
import warnings
warnings.simplefilter('ignore')
for key, build in PRINTED.items():
    for options_key, options in PRINT_OPTIONS.items():
        torch.set_printoptions(**options)
        out['repr ' + key + ' / ' + options_key] = repr(torch.from_numpy(eval(build)))
        torch.set_printoptions(profile='default', sci_mode=None)

g = torch.Generator()
out['default seed'] = g.initial_seed()
out['manual_seed returns the generator'] = g.manual_seed(5) is g
out['negative seed'] = torch.Generator().manual_seed(-1).initial_seed()
torch.manual_seed(11); a = torch.rand(4)
out['seeded generator draws the global stream of its seed'] = bool(
    torch.equal(a, torch.rand(4, generator=torch.Generator().manual_seed(11))))
state = g.get_state(); first = torch.randn(3, generator=g); g.set_state(state)
out['set_state repeats'] = bool(torch.equal(first, torch.randn(3, generator=g)))
out['set_state returns the generator'] = g.set_state(state) is g
out['state dtype'] = str(g.get_state().dtype)
for key, call in (('manual_seed str', "g.manual_seed('a')"), ('manual_seed float', 'g.manual_seed(1.5)'),
                  ('manual_seed 2**64', 'g.manual_seed(2**64)'), ('set_state list', 'g.set_state([1, 2])'),
                  ('set_state float tensor', 'g.set_state(torch.zeros(16))'),
                  ('rand generator str', "torch.rand(2, generator='x')")):
    try:
        eval(call)
        out['error ' + key] = None
    except Exception as e:
        out['error ' + key] = type(e).__name__

x = torch.from_numpy(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
y = x.to(memory_format=torch.channels_last)
out['channels_last strides'] = list(y.stride())
out['channels_last is_contiguous'] = [y.is_contiguous(), y.is_contiguous(memory_format=torch.channels_last),
                                      x.is_contiguous(memory_format=torch.channels_last)]
out['back to contiguous strides'] = list(y.contiguous().stride())
out['contiguous(channels_last) strides'] = list(x.contiguous(memory_format=torch.channels_last).stride())
out['channels_last_3d strides'] = list(torch.zeros(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d).stride())
out['size-1 channels strides'] = list(torch.zeros(2, 1, 3, 3).to(memory_format=torch.channels_last).stride())
out['format reprs'] = [repr(torch.channels_last), repr(torch.contiguous_format), repr(torch.preserve_format)]
try:
    torch.zeros(2, 3).to(memory_format=torch.channels_last)
except Exception as e:
    out['rank-2 channels_last'] = [type(e).__name__, str(e)]
conv = torch.nn.Conv2d(2, 3, 3)
conv.weight.data = torch.from_numpy(W); conv.bias.data = torch.from_numpy(B)
image = torch.from_numpy(IMAGE).requires_grad_()
conv_out = conv(image.to(memory_format=torch.channels_last)); conv_out.sum().backward()
out['conv channels_last'] = conv_out.detach().numpy(); out['conv grad'] = image.grad.numpy()

out['deterministic before'] = [torch.are_deterministic_algorithms_enabled(),
                               torch.is_deterministic_algorithms_warn_only_enabled(),
                               torch.get_deterministic_debug_mode()]
torch.use_deterministic_algorithms(True, warn_only=True)
out['deterministic warn_only'] = [torch.are_deterministic_algorithms_enabled(),
                                  torch.is_deterministic_algorithms_warn_only_enabled(),
                                  torch.get_deterministic_debug_mode()]
torch.set_deterministic_debug_mode('error')
out['debug mode error'] = [torch.are_deterministic_algorithms_enabled(),
                           torch.is_deterministic_algorithms_warn_only_enabled(),
                           torch.get_deterministic_debug_mode()]
torch.use_deterministic_algorithms(False)
out['deterministic after'] = torch.get_deterministic_debug_mode()
for key, call in (('mode int', 'torch.use_deterministic_algorithms(1)'),
                  ('debug mode float', 'torch.set_deterministic_debug_mode(1.5)'),
                  ('debug mode word', "torch.set_deterministic_debug_mode('loud')"),
                  ('debug mode 3', 'torch.set_deterministic_debug_mode(3)'),
                  ('threads 0', 'torch.set_num_threads(0)'),
                  ('threads float', 'torch.set_num_threads(1.5)'),
                  ('threads bool', 'torch.set_num_threads(True)'),
                  ('cudnn flag str', "setattr(torch.backends.cudnn, 'deterministic', 'x')"),
                  ('allow_tf32 int', "setattr(torch.backends.cuda.matmul, 'allow_tf32', 1)")):
    try:
        eval(call)
        out['error ' + key] = None
    except Exception as e:
        out['error ' + key] = type(e).__name__

torch.set_num_threads(1)
torch.set_num_interop_threads(2)
out['threads after setting'] = [torch.get_num_threads(), torch.get_num_interop_threads()]
out['memory_format instances'] = [isinstance(f, torch.memory_format) for f in
                                  (torch.channels_last, torch.contiguous_format, torch.preserve_format)]
precisions = [torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32]
for p in ('high', 'medium', 'unknown', 'highest'):
    torch.set_float32_matmul_precision(p)
    precisions += [torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32]
torch.backends.cuda.matmul.allow_tf32 = True
precisions.append(torch.get_float32_matmul_precision())
torch.backends.cuda.matmul.allow_tf32 = False
precisions.append(torch.get_float32_matmul_precision())
out['matmul precision'] = precisions
c = torch.backends.cudnn
out['cudnn defaults'] = [c.enabled, c.benchmark, c.deterministic, c.allow_tf32]
# the device pick of PyTorch's tutorials ("cuda", else "mps", else "cpu"); Linux has no MPS
out['mps'] = [torch.backends.mps.is_available(), torch.backends.mps.is_built()]

import torch.functional as functional_module
out['functional einsum'] = functional_module.einsum('ij,jk->ik', torch.from_numpy(W[0, 0]),
                                                    torch.from_numpy(W[1, 1])).numpy()
out['functional split'] = [list(p.shape) for p in functional_module.split(torch.zeros(5, 2), 2)]
"""


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(0)
    snippet = f"PRINTED = {PRINTED!r}\nPRINT_OPTIONS = {PRINT_OPTIONS!r}\n" + REFERENCE
    return torch_reference.run(snippet, W=rng.normal(size=(3, 2, 3, 3)).astype(np.float32),
                               B=rng.normal(size=3).astype(np.float32),
                               IMAGE=rng.normal(size=(2, 2, 5, 6)).astype(np.float32))


@contextlib.contextmanager
def printoptions(**options):
    saved = _tensor_print.get_printoptions()
    try:
        torch.set_printoptions(**options)
        yield
    finally:
        torch.set_printoptions(**saved)


def _values_text(text):
    """A repr without its dtype suffix: gpuaccel always names the dtype, PyTorch only when it
    is not a default; the values' layout is what must match."""
    return re.sub(r",\s*dtype=(torch\.)?\w+(?=[,)])", "", text)


# ---- set_printoptions ----

@pytest.mark.parametrize("options_key", sorted(PRINT_OPTIONS))
def test_repr_lays_values_out_as_pytorch(reference, options_key):
    for key, build in PRINTED.items():
        values = eval(build)
        with printoptions(**PRINT_OPTIONS[options_key]):
            ours = repr(torch.tensor(values))
        assert _values_text(ours) == reference[f"repr {key} / {options_key}"], key


def test_repr_suffixes_wrap_and_name_the_dtype():
    t = torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True) * 2
    assert repr(t) == ("tensor([[ 0.,  2.,  4.],\n        [ 6.,  8., 10.]], dtype=float32, "
                       "grad_fn=<MulBackward>)")
    with printoptions(linewidth=40):  # a suffix past the line width goes on its own line
        assert repr(t) == ("tensor([[ 0.,  2.,  4.],\n        [ 6.,  8., 10.]],\n"
                           "       dtype=float32,\n       grad_fn=<MulBackward>)")
    assert repr(torch.tensor([1.5], dtype=torch.bfloat16)) == "tensor([1.5000], dtype=bfloat16)"


def test_printoptions_are_restored_and_checked():
    before = _tensor_print.get_printoptions()
    with printoptions(precision=1, profile="short"):
        assert _tensor_print.get_printoptions()["precision"] == 1  # the option after the profile
        assert repr(torch.tensor([0.25, 1.0])) == "tensor([0.2, 1.0], dtype=float32)"
    assert _tensor_print.get_printoptions() == before
    with pytest.raises(ValueError, match="profile must be one of"):
        torch.set_printoptions(profile="long")
    with pytest.raises(TypeError, match="precision must be an int >= 0"):
        torch.set_printoptions(precision="3")
    with pytest.raises(TypeError, match="linewidth must be an int >= 0, got float 8.5"):
        torch.set_printoptions(precision=1, linewidth=8.5)  # the good precision is not kept
    assert _tensor_print.get_printoptions() == before


# ---- torch.Generator ----

def test_generator_facts_and_errors_match_pytorch(reference):
    g = torch.Generator()
    assert g.initial_seed() == reference["default seed"]
    assert (g.manual_seed(5) is g) == reference["manual_seed returns the generator"]
    assert torch.Generator().manual_seed(-1).initial_seed() == reference["negative seed"]
    torch.manual_seed(11)
    a = torch.rand(4)
    same = bool(torch.equal(a, torch.rand(4, generator=torch.Generator().manual_seed(11))))
    assert same == reference["seeded generator draws the global stream of its seed"] is True
    state = g.get_state()
    first = torch.randn(3, generator=g).numpy()
    assert (g.set_state(state) is g) == reference["set_state returns the generator"]
    np.testing.assert_array_equal(torch.randn(3, generator=g).numpy(), first)
    assert reference["set_state repeats"] and "torch." + str(g.get_state().dtype).split(".")[-1] \
        == reference["state dtype"]
    calls = {"manual_seed str": lambda: g.manual_seed("a"),
             "manual_seed float": lambda: g.manual_seed(1.5),
             "manual_seed 2**64": lambda: g.manual_seed(2 ** 64),
             "set_state list": lambda: g.set_state([1, 2]),
             "set_state float tensor": lambda: g.set_state(torch.zeros(16)),
             "rand generator str": lambda: torch.rand(2, generator="x")}
    for key, call in calls.items():
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == reference["error " + key], key
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        g.set_state(torch.zeros(3, dtype=torch.uint8))


def test_a_seeded_generator_repeats_and_ignores_the_global_seed():
    draws = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        g = torch.Generator().manual_seed(7)
        draws.append([torch.rand(3, generator=g).numpy(), torch.randn(2, 2, generator=g).numpy(),
                      torch.randint(0, 100, (4,), generator=g).numpy(),
                      torch.randperm(6, generator=g).numpy(),
                      torch.bernoulli(torch.full((5,), 0.5), generator=g).numpy()])
    for ours, again in zip(*draws):
        np.testing.assert_array_equal(ours, again)
    # The generator's draws leave the global stream where it was.
    torch.manual_seed(3)
    expected = torch.rand(4).numpy()
    torch.manual_seed(3)
    torch.rand(10, generator=torch.Generator().manual_seed(9))
    np.testing.assert_array_equal(torch.rand(4).numpy(), expected)
    # ... and successive draws of one generator differ (it advances).
    g = torch.Generator().manual_seed(7)
    assert not np.array_equal(torch.rand(3, generator=g).numpy(),
                              torch.rand(3, generator=g).numpy())
    assert g.seed() == g.initial_seed()


def test_default_generator_is_the_global_stream():
    saved = torch.get_rng_state()
    try:
        torch.default_generator.manual_seed(21)
        assert torch.initial_seed() == 21 == torch.default_generator.initial_seed()
        first = torch.rand(3, generator=torch.default_generator).numpy()
        torch.manual_seed(21)
        np.testing.assert_array_equal(torch.rand(3).numpy(), first)
        np.testing.assert_array_equal(torch.default_generator.get_state().numpy(),
                                      torch.get_rng_state().numpy())
    finally:
        torch.set_rng_state(saved)


def test_data_loading_shuffles_reproducibly_with_a_generator():
    data = torch.utils.data
    dataset = data.TensorDataset(torch.arange(10))

    def orders(seed):
        loader = data.DataLoader(dataset, batch_size=10, shuffle=True,
                                 generator=torch.Generator().manual_seed(seed))
        return [next(iter(loader))[0].numpy().tolist() for _ in range(2)]

    torch.manual_seed(0)
    first = orders(4)
    torch.manual_seed(1)
    assert orders(4) == first  # the global seed does not matter
    assert first[0] != first[1]  # each pass draws a new order
    assert sorted(first[0]) == list(range(10))
    splits = [data.random_split(range(10), [7, 3], generator=torch.Generator().manual_seed(42))
              for _ in range(2)]
    assert [s.indices for s in splits[0]] == [s.indices for s in splits[1]]
    sampler = data.SubsetRandomSampler([5, 6, 7, 8], generator=torch.Generator().manual_seed(1))
    assert sorted(sampler) == [5, 6, 7, 8]


# ---- memory formats ----

def test_memory_formats_match_pytorch(reference):
    x = torch.tensor(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
    y = x.to(memory_format=torch.channels_last)
    assert list(y.stride()) == reference["channels_last strides"]
    assert [y.is_contiguous(), y.is_contiguous(memory_format=torch.channels_last),
            x.is_contiguous(memory_format=torch.channels_last)] == \
        reference["channels_last is_contiguous"]
    assert list(y.contiguous().stride()) == reference["back to contiguous strides"]
    assert list(x.contiguous(memory_format=torch.channels_last).stride()) == \
        reference["contiguous(channels_last) strides"]
    assert list(torch.zeros(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d).stride()) \
        == reference["channels_last_3d strides"]
    assert torch.zeros(2, 1, 3, 3).to(memory_format=torch.channels_last).is_contiguous(
        memory_format=torch.channels_last)
    assert [repr(torch.channels_last), repr(torch.contiguous_format),
            repr(torch.preserve_format)] == reference["format reprs"]
    assert [isinstance(f, torch.memory_format) for f in (
        torch.channels_last, torch.contiguous_format, torch.preserve_format)] == \
        reference["memory_format instances"]
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    kind, message = reference["rank-2 channels_last"]
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.zeros(2, 3).to(memory_format=torch.channels_last)
    assert kind == "RuntimeError"
    with pytest.raises(TypeError, match="memory_format must be a torch.memory_format"):
        x.contiguous(memory_format="channels_last")


def test_channels_last_conv_and_gradient_match_pytorch(reference):
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
    b = rng.normal(size=3).astype(np.float32)
    image_values = rng.normal(size=(2, 2, 5, 6)).astype(np.float32)
    conv = torch.nn.Conv2d(2, 3, 3)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor(w))
        conv.bias.copy_(torch.tensor(b))
    conv.to(memory_format=torch.channels_last)  # 4-d weights only; the bias stays as it is
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
    image = torch.tensor(image_values, requires_grad=True)
    out = conv(image.to(memory_format=torch.channels_last))
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), reference["conv channels_last"],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(image.grad.numpy(), reference["conv grad"], rtol=1e-5, atol=1e-5)


# ---- threads, determinism, matmul precision, backends ----

def _error_name(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__
    return None


@pytest.mark.usefixtures("fresh_runtime")
def test_thread_counts_are_gpuaccels_with_pytorchs_checks(reference):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(2)
    assert [torch.get_num_threads(), torch.get_num_interop_threads()] == \
        reference["threads after setting"]
    assert gpuaccel.config.threading.get_intra_op_parallelism_threads() == 1
    assert gpuaccel.config.threading.get_inter_op_parallelism_threads() == 2
    for key, bad in (("threads 0", 0), ("threads float", 1.5), ("threads bool", True)):
        assert _error_name(lambda: torch.set_num_threads(bad)) == reference["error " + key]
    torch.zeros(1).abs()  # the runtime starts: the counts are fixed from here on
    with pytest.raises(RuntimeError, match="call set_num_threads before the first op"):
        torch.set_num_threads(2)


@pytest.fixture
def determinism_restored():
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])


def _modes():
    return [torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_deterministic_debug_mode()]


@pytest.mark.usefixtures("determinism_restored")
def test_deterministic_algorithms_are_gpuaccels_op_determinism(reference):
    torch.use_deterministic_algorithms(False)
    assert _modes() == reference["deterministic before"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the GPU note, where a GPU is visible
        torch.use_deterministic_algorithms(True, warn_only=True)
        assert _modes() == reference["deterministic warn_only"]
        assert gpuaccel.config.experimental.is_op_determinism_enabled()
        torch.set_deterministic_debug_mode("error")
        assert _modes() == reference["debug mode error"]
    torch.use_deterministic_algorithms(False)
    assert torch.get_deterministic_debug_mode() == reference["deterministic after"]
    assert not gpuaccel.config.experimental.is_op_determinism_enabled()
    for key, call in (("mode int", lambda: torch.use_deterministic_algorithms(1)),
                      ("debug mode float", lambda: torch.set_deterministic_debug_mode(1.5)),
                      ("debug mode word", lambda: torch.set_deterministic_debug_mode("loud")),
                      ("debug mode 3", lambda: torch.set_deterministic_debug_mode(3))):
        assert _error_name(call) == reference["error " + key], key


@pytest.fixture
def switches_restored():
    precision = torch.get_float32_matmul_precision()
    flags = {n: getattr(torch.backends.cudnn, n)
             for n in ("enabled", "benchmark", "deterministic", "allow_tf32")}
    yield
    torch.set_float32_matmul_precision(precision)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, value in flags.items():
            setattr(torch.backends.cudnn, name, value)


@pytest.mark.usefixtures("switches_restored")
def test_matmul_precision_and_backend_flags_read_as_pytorchs(reference):
    torch.set_float32_matmul_precision("highest")
    seen = [torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32]
    for p in ("high", "medium", "unknown", "highest"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.set_float32_matmul_precision(p)
        assert bool(caught) == (p == "unknown")  # PyTorch logs the same sentence
        seen += [torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32]
    torch.backends.cuda.matmul.allow_tf32 = True
    seen.append(torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = False
    seen.append(torch.get_float32_matmul_precision())
    assert seen == reference["matmul precision"]
    cudnn = torch.backends.cudnn
    assert [cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32] == \
        reference["cudnn defaults"]
    assert _error_name(lambda: setattr(cudnn, "deterministic", "x")) == \
        reference["error cudnn flag str"]
    assert _error_name(lambda: setattr(torch.backends.cuda.matmul, "allow_tf32", 1)) == \
        reference["error allow_tf32 int"]
    cudnn.benchmark = True
    assert cudnn.benchmark is True
    with pytest.raises(AttributeError, match="no flag 'benchmarks'"):
        cudnn.benchmarks = True
    assert cudnn.is_available() == torch.cuda.is_available()
    assert [torch.backends.mps.is_available(), torch.backends.mps.is_built()] == \
        reference["mps"]


def test_float32_matmul_stays_full_precision_whatever_the_setting():
    # gpuaccel never computes float32 in TF32: 'medium' changes no result (on the CPU here;
    # test_tf32_setting_changes_no_gpu_result checks a GPU).
    rng = np.random.default_rng(1)
    a, b = (rng.normal(size=(16, 16)).astype(np.float32) for _ in range(2))
    before = torch.get_float32_matmul_precision()
    try:
        full = (torch.tensor(a) @ torch.tensor(b)).numpy()
        torch.set_float32_matmul_precision("medium")
        np.testing.assert_array_equal((torch.tensor(a) @ torch.tensor(b)).numpy(), full)
    finally:
        torch.set_float32_matmul_precision(before)


@pytest.mark.gpu
def test_tf32_setting_changes_no_gpu_result():
    rng = np.random.default_rng(2)
    a, b = (rng.normal(size=(256, 256)).astype(np.float32) for _ in range(2))
    before = torch.get_float32_matmul_precision()
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        full = (torch.tensor(a, device="cuda") @ torch.tensor(b, device="cuda")).numpy()
        torch.backends.cuda.matmul.allow_tf32 = True
        tf32 = (torch.tensor(a, device="cuda") @ torch.tensor(b, device="cuda")).numpy()
        np.testing.assert_array_equal(tf32, full)
        # float32 accuracy, far inside TF32's 10-bit mantissa error (~1e-3 relative)
        np.testing.assert_allclose(full, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    finally:
        torch.set_float32_matmul_precision(before)


def test_torch_functional_is_the_faces_functions(reference):
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
    import gpuaccel.torch.functional as functional
    np.testing.assert_allclose(
        functional.einsum("ij,jk->ik", torch.tensor(w[0, 0]), torch.tensor(w[1, 1])).numpy(),
        reference["functional einsum"], rtol=1e-5, atol=1e-6)
    assert [list(p.shape) for p in functional.split(torch.zeros(5, 2), 2)] == \
        reference["functional split"]
    assert torch.functional.meshgrid is torch.meshgrid
