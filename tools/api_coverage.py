"""Writes docs/api_coverage.md: how much of the real Keras, TensorFlow and PyTorch namespaces
gpuaccel covers, name by name, measured from the frameworks themselves (issue 30).

Why a script: the README promises that course code runs with only its import changed, and a
count by hand goes stale with every merge. Here the public names come from the installed
``keras`` and ``tensorflow`` and from PyTorch (Debian's python3-torch 1.13, walked in a
``/usr/bin/python3`` subprocess, as tests/python/torch_reference.py runs it), and each name gets
one status:

- implemented: gpuaccel's face has the name AND a test compares it with the framework: a test
  file under tests/python that runs the real framework (imports tensorflow/keras, or uses
  torch_reference) and uses the name as an attribute of its namespace, ``layers.Dense``
  (USE_PREFIXES), at least MIN_USES times (a textual rule: it finds the file, the file's
  reader judges the comparison). A name that exists
  without such a test counts as missing: the table does not trust stubs.
- refused: asking gpuaccel's face for it raises the AttributeError of an ``_unsupported`` table
  that says it is not supported and what to use instead (the generic "not supported" of a name
  no table lists is missing, not refused).
- out of scope: the rules in OUT_OF_SCOPE (sparse, ragged, string, complex, TPU...), with the
  reason.
- missing: everything else.

    python tools/api_coverage.py            # rewrite docs/api_coverage.md
    python tools/api_coverage.py --check    # exit 1 when the file differs (test_api_coverage.py)

Each name also shows in how many official example files it is used, from the committed
tools/example_name_uses.json (written by tools/example_name_uses.py), and the most used names
that are not implemented head the file, so work goes to them first.

gpuaccel must be importable (PYTHONPATH=build/dev/stage).
"""
import argparse
import importlib
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "api_coverage.md"
EXAMPLE_USES = ROOT / "tools" / "example_name_uses.json"
TESTS = ROOT / "tests" / "python"
TORCH_PYTHON = os.environ.get("GPUACCEL_TORCH_PYTHON", "/usr/bin/python3")

# (namespace as written in the framework, framework, gpuaccel's face for it)
NAMESPACES = [
    ("keras.layers", "keras", "gpuaccel.keras.layers"),
    ("keras.losses", "keras", "gpuaccel.keras.losses"),
    ("keras.metrics", "keras", "gpuaccel.keras.metrics"),
    ("keras.optimizers", "keras", "gpuaccel.keras.optimizers"),
    ("keras.optimizers.schedules", "keras", "gpuaccel.keras.optimizers.schedules"),
    ("keras.callbacks", "keras", "gpuaccel.keras.callbacks"),
    ("keras.activations", "keras", "gpuaccel.keras.activations"),
    ("keras.initializers", "keras", "gpuaccel.keras.initializers"),
    ("keras.regularizers", "keras", "gpuaccel.keras.regularizers"),
    ("keras.constraints", "keras", "gpuaccel.keras.constraints"),
    ("keras.ops", "keras", "gpuaccel.keras.ops"),
    ("keras.utils", "keras", "gpuaccel.keras.utils"),
    ("tf", "tensorflow", "gpuaccel"),
    ("tf.math", "tensorflow", "gpuaccel.math"),
    ("tf.nn", "tensorflow", "gpuaccel.nn"),
    ("tf.image", "tensorflow", "gpuaccel.image"),
    ("tf.linalg", "tensorflow", "gpuaccel.linalg"),
    ("tf.random", "tensorflow", "gpuaccel.random"),
    ("tf.data.Dataset", "tensorflow", "gpuaccel.data.Dataset"),
    ("tf.config", "tensorflow", "gpuaccel.config"),
    ("tf.distribute", "tensorflow", "gpuaccel.distribute"),
    ("torch", "torch", "gpuaccel.torch"),
    ("torch.Tensor", "torch", "gpuaccel.Tensor"),
    ("torch.nn.functional", "torch", "gpuaccel.torch.nn.functional"),
    ("torch.cuda", "torch", "gpuaccel.cuda"),
]

# Name patterns gpuaccel does not aim at, and why (first match wins; matched case-insensitively
# against the bare name).
OUT_OF_SCOPE = [
    (r"sparse", "sparse tensors: gpuaccel's tensors are dense"),
    (r"ragged|^nested$", "ragged tensors (torch.nested's too): gpuaccel's tensors are rectangular"),
    (r"^experimental$", "TensorFlow's experimental corner (tf.experimental: ExtensionType and "
                        "the dispatch decorators for composite types, TensorRT, DTensor, "
                        "tf.experimental.numpy's NumPy API over TF tensors -- gpuaccel's "
                        "NumPy-style functions are keras.ops'); no stable API to match"),
    (r"^ops$|^classes$", "PyTorch's C++ operator and class registries (torch.ops.aten.*, "
                         "torch.ops.load_library, TorchScript classes): custom operators built "
                         "against libtorch; gpuaccel adds ops through its own op list"),
    (r"string|^as_string$|unicode|^text|regex", "string tensors: no string dtype"),
    (r"complex|^conj|^real$|^imag$|^angle$|^polar$|^view_as_real|^view_as_complex",
     "complex numbers: no complex dtype"),
    (r"tpu", "TPUs: gpuaccel runs on CPUs and NVIDIA GPUs"),
    (r"q(u)?int|quantiz|^dequantize|^fake_quant|^q_|^int_repr$|^is_quantized$",
     "quantized dtypes: not part of the course"),
    # int8 and int16 are not here: the tutorials use them, so they stay listed as refused or
    # missing until gpuaccel has them.
    (r"^cdouble|^float8|^uint16|^uint32|^uint64|^cfloat|^chalf$|bits\d|^is_complex",
     "dtypes gpuaccel lacks on purpose (it has float32/16/bf16/64, int32/64, uint8, bool)"),
    (r"^mps|mkldnn|^vulkan|^xpu|^hip|^ipu|^mtia|^fpga|^lazy$|^xla",
     "other accelerators and backends"),
    (r"^fft|^ifft|^rfft|^irfft|^hfft|^ihfft|stft|^istft", "Fourier transforms: not in the course"),
    (r"^LinearOperatorCirculant", "circulant operators are defined by their Fourier spectrum: "
                                  "Fourier transforms are not in the course"),
    (r"^jit$|^fx$|^onnx$|^package$|^_?C$|^compiler$|^export$|^backends$|^overrides$|"
     r"^hub$|^library$|^storage$|storage$|^TypedStorage|^UntypedStorage|^futures$|^monitor$|"
     r"^ao$|^autocast|^__config__$|^__future__$",
     "framework internals and tooling outside a training loop"),
    (r"^Graph$|^GraphKeys$|^graph_util|^get_static_value$|^init_scope$|^control_dependencies$|"
     r"^compat$|^lite$|^tools$|^estimator$|^feature_column$|^queue$|^sets$|"
     r"^strings$|^raw_ops$|^autodiff$|^signal$|^mlir$|^tpu$|^dtensor$|"
     r"^version$|^sysconfig$|^types$|^__internal__$|^__operators__$|"
     r"^AggregationMethod$|^Module$|^OptionalSpec$|^TypeSpec$|^UnconnectedGradients$|"
     r"^DeviceSpec$|^Operation$|^IndexedSlices|^register_tensor_conversion_function$",
     "TensorFlow graph-mode and tooling APIs: gpuaccel runs eagerly"),
    (r"^gradients$|^hessians$|^parallel_stack$",
     "graph-only TensorFlow ops: TF itself raises for them in eager mode (tf.gradients and "
     "tf.hessians say to use tf.GradientTape; tf.parallel_stack is 'not compatible with eager "
     "execution')"),
    (r"^import_graph_def$|^load_op_library$|^load_library$|^RegisterGradient$|^no_gradient$|"
     r"^make_ndarray$|^make_tensor_proto$|^type_spec_from_value$|^NoneTensorSpec$|"
     r"^TensorArraySpec$|^variable_creator_scope$|^CriticalSection$|^autograph$|"
     r"^guarantee_const$|^nondifferentiable_batch_function$|^test$",
     "TensorFlow graph and runtime machinery (GraphDefs, TensorProtos, custom-op libraries, "
     "the gradient and variable-creator registries, TypeSpecs of composite tensors, "
     "AutoGraph's source conversion, serving batch functions, tf.test's TestCase): gpuaccel "
     "has no graphs, protos or op registry to plug into"),
    (r"^ctc_greedy_decoder$|^ctc_beam_search_decoder$",
     "sparse tensors: the CTC decoders return their decoded paths as SparseTensors"),
    (r"^edit_distance$", "sparse tensors: tf.edit_distance takes its hypotheses and truths as "
                         "SparseTensors, and gpuaccel's tensors are dense"),
    (r"^OrbaxCheckpoint$", "checkpoints in Orbax's format, written by the orbax-checkpoint "
                           "package (a JAX-ecosystem library gpuaccel does not depend on); "
                           "ModelCheckpoint and BackupAndRestore save gpuaccel's training"),
    (r"^resource$|^variant$", "TensorFlow's handle dtypes: no eager tensor of them holds data"),
    (r"^security$", "tf.security.fuzzing: helpers for fuzzing TensorFlow's own kernels"),
    (r"^check_pinned$", "a check of TF's pinned host-memory placement, which gpuaccel's "
                        "tensors do not have"),
]

# Per namespace: names a module's namespace holds that are not its API (what it imports for its
# own use: typing aliases, modules, dispatch helpers, docstring fragments).
NOT_API = {
    "torch.nn.functional": (
        r"^(BroadcastingList\d|Callable|DType|List|Optional|TYPE_CHECKING|Tuple|Union|Tensor|"
        r"math|torch|warnings|utils|grad|boolean_dispatch|handle_torch_function|"
        r"has_torch_function\w*|assert_int_or_pair|reproducibility_notes|tf32_notes)$",
        "not torch.nn.functional's API: a typing alias, module or helper it imports for its own "
        "use (torch.nn.grad is the module `grad`)"),
}

# A name used in more example files than this and not implemented is listed at the top.
MOST_USED_ABOVE = 5

# A comparison test uses the name on both sides (gpuaccel's call and the framework's), so a file
# that names `.name` once (an aside, a docstring) does not count.
MIN_USES = 2

# What must stand before `.name` for a use to count for a namespace: its last part (so
# `layers.Dense` counts for keras.layers, while `tf.nn.relu` does not count for keras.activations
# nor `keras.activations.relu` for tf.nn), plus the usual aliases. None: any `.name` counts --
# the top levels (their alias is the test's choice: tf, gt, torch...) and the classes whose
# names are methods called on an instance (`t.sum()`, `ds.batch()`).
USE_PREFIXES = {"tf": None, "torch": None, "torch.Tensor": None, "tf.data.Dataset": None,
                "torch.nn.functional": ("functional", "F")}


def module_aliases(text):
    """{alias: last part of the namespace it stands for} from a test file's own lines
    (``A, KA = gk.activations, keras.activations``; ``import keras.ops as kops``;
    ``from gpuaccel.keras import layers as L``), so table-driven tests count too."""
    aliases = {}
    for left, right in re.findall(r"^\s*([A-Za-z_][\w, ]*?)\s*=\s*([\w., ]+?)\s*$", text, re.M):
        names, values = [n.strip() for n in left.split(",")], [v.strip() for v in right.split(",")]
        if len(names) == len(values):
            for alias, value in zip(names, values):
                if re.fullmatch(r"[A-Za-z_][\w.]*\.\w+", value):
                    aliases[alias] = value.rsplit(".", 1)[1]
    for value, alias in re.findall(r"^\s*import ([\w.]+) as (\w+)", text, re.M):
        aliases[alias] = value.rsplit(".", 1)[-1]
    for value, alias in re.findall(r"^\s*from [\w.]+ import (\w+) as (\w+)", text, re.M):
        aliases[alias] = value
    return aliases


def use_pattern(namespace, name, aliases):
    """The regular expression of one use of ``name`` counted for ``namespace`` in a file whose
    module aliases are ``aliases``."""
    prefixes = USE_PREFIXES.get(namespace, (namespace.rsplit(".", 1)[-1],))
    if prefixes:
        prefixes = (*prefixes, *(a for a, part in aliases.items() if part in prefixes))
    before = r"\b(?:%s)" % "|".join(map(re.escape, prefixes)) if prefixes else ""
    return re.compile(before + r"\." + re.escape(name) + r"\b")


_TORCH_CHILD = r"""
import json, torch, torch.nn.functional
spaces = {"torch": torch, "torch.Tensor": torch.Tensor,
          "torch.nn.functional": torch.nn.functional, "torch.cuda": torch.cuda}
print(json.dumps({"version": torch.__version__.split("+")[0],
                  "names": {k: sorted(n for n in dir(v) if not n.startswith("_"))
                            for k, v in spaces.items()}}))
"""


def _resolve(dotted):
    """The object at a dotted path (modules imported on the way), or None."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[:i + 1]))
            except ImportError:
                return None
    return obj


def real_names():
    """{namespace: sorted public names} and {framework: version}, from the frameworks."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    names, versions = {}, {"keras": keras.__version__, "tensorflow": tf.__version__}
    for namespace, framework, _ in NAMESPACES:
        if framework == "torch":
            continue
        path = namespace.replace("tf.", "tensorflow.", 1) if namespace != "tf" else "tensorflow"
        names[namespace] = sorted(n for n in dir(_resolve(path)) if not n.startswith("_"))
    done = subprocess.run([TORCH_PYTHON, "-c", _TORCH_CHILD], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        sys.exit(f"walking PyTorch's namespace with {TORCH_PYTHON} failed (apt-get install "
                 f"python3-torch, or set GPUACCEL_TORCH_PYTHON):\n{done.stderr[-2000:]}")
    torch = json.loads(done.stdout.strip().splitlines()[-1])
    names.update(torch["names"])
    versions["torch"] = torch["version"]
    return names, versions


def comparison_tests():
    """{framework: [(test file name, its text, its module aliases)]}: the test files that run
    that framework."""
    files = {"keras": [], "tensorflow": [], "torch": []}
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text()
        runs_tf = r"^\s*(import|from) (tensorflow|keras)\b|importorskip\([\"'](tensorflow|keras)"
        if re.search(runs_tf, text, re.M):
            files["keras"].append((path.name, text, module_aliases(text)))
            files["tensorflow"].append((path.name, text, module_aliases(text)))
        if "torch_reference" in text:
            files["torch"].append((path.name, text, module_aliases(text)))
    return files


def _out_of_scope(namespace, name):
    not_api = NOT_API.get(namespace)
    if not_api and re.search(not_api[0], name):
        return not_api[1]
    for pattern, reason in OUT_OF_SCOPE:
        if re.search(pattern, name, re.I):
            return reason
    return None


def status(face, namespace, name, framework, tests):
    """(status, detail) of one framework name against gpuaccel's face for its namespace."""
    if face is not None:
        try:
            getattr(face, name)
            exists, refusal = True, None
        except AttributeError as error:
            exists, refusal = False, str(error)
        except Exception:  # noqa: BLE001 - a property that needs an instance
            exists, refusal = True, None
        if exists:
            for test_name, text, aliases in tests[framework]:
                if len(use_pattern(namespace, name, aliases).findall(text)) >= MIN_USES:
                    return "implemented", f"`{test_name}`"
    # An out-of-scope name that gpuaccel refuses with a hint is still out of scope: the refusal
    # is how it tells the user so.
    reason = _out_of_scope(namespace, name)
    if face is not None and not exists and reason is None:
        if refusal and "is not supported by gpuaccel" in refusal and "; use " in refusal:
            instead = refusal.split("; use ", 1)[1].split(" (see docs/", 1)[0]
            return "refused", f"use {instead}"
    if reason:
        return "out of scope", reason
    if face is not None and exists:
        return "missing", "exists, but no test compares it with the framework"
    return "missing", ""


def _counted_repository(repo, info):
    """Which snapshot of one example repository was counted, e.g. keras-team/keras-io at
    `ac7f64cb542c` of 2024-01-11, read from its copy chicham/keras-io (223 files)."""
    at = f"`{info['commit'][:12]}`" if info["commit"] else "a working folder"
    date = f" of {info['date']}" if info.get("date") else ""
    copy = f", read from its copy {info['read_from']}" if info.get("read_from") else ""
    return f"{repo} at {at}{date}{copy} ({info['files']} files)"


def example_uses():
    """({namespace: {name: example files using it}}, the text saying what was counted) from
    tools/example_name_uses.json; empty counts when the file is absent."""
    if not EXAMPLE_USES.exists():
        return {}, "no example counts (`tools/example_name_uses.json` is absent)"
    data = json.loads(EXAMPLE_USES.read_text())
    counted = ", ".join(_counted_repository(repo, info)
                        for repo, info in data["repositories"].items())
    missing = data.get("not_counted")
    missing = f" Not counted (no snapshot was given to the counter): {', '.join(missing)}." \
        if missing else ""
    return data["uses"], f"{counted}, counted on {data['generated']}.{missing}"


def most_used_not_implemented(table, uses):
    """Markdown lines listing the names used in more than MOST_USED_ABOVE example files whose
    status is missing or refused, most used first."""
    rows = sorted(((uses.get(ns, {}).get(n, 0), ns, n, s, d) for ns, rows in table.items()
                   for n, s, d in rows if s in ("missing", "refused")),
                  key=lambda r: (-r[0], r[1], r[2]))
    rows = [r for r in rows if r[0] > MOST_USED_ABOVE]
    lines = ["", "## Most used names that are not implemented", "",
             f"Names used in more than {MOST_USED_ABOVE} example files whose status is missing "
             "or refused, most used first: implement from the top down.", ""]
    if not rows:
        return lines + ["None.", ""]
    return lines + ["| name | namespace | used in N examples | status | detail |",
                    "|---|---|---|---|---|"] + [
        f"| `{n}` | `{ns}` | {count} | {s} | {d} |" for count, ns, n, s, d in rows]


def render():
    names, versions = real_names()
    import gpuaccel  # noqa: F401 - after TensorFlow, so its log settings apply to both
    tests = comparison_tests()
    uses, counted = example_uses()
    lines = [
        "# API coverage: gpuaccel against the real Keras, TensorFlow and PyTorch namespaces",
        "",
        "Generated by `tools/api_coverage.py` (do not edit; `tests/python/test_api_coverage.py` "
        "fails when it is stale: rerun `PYTHONPATH=build/dev/stage python3 tools/api_coverage.py`"
        " and commit).",
        "",
        f"Measured against Keras {versions['keras']}, TensorFlow {versions['tensorflow']} and "
        f"PyTorch {versions['torch']}. PyTorch is Debian's `python3-torch` (the project's "
        "reference, see `tests/python/torch_reference.py`), whose namespace is older than "
        "PyTorch 2.x's: names added since 1.13 are not counted here.",
        "",
        "Statuses: **implemented** (gpuaccel has it and a test under `tests/python` that runs the "
        "real framework uses it: the test is named), **refused** (gpuaccel raises an "
        "`AttributeError` saying it is not supported and what to use instead), **out of scope** "
        "(with the reason), **missing** (everything else, including a name gpuaccel has with no "
        "comparison test). The PyTorch rows are `import gpuaccel.torch as torch`'s face, the "
        "TensorFlow rows `import gpuaccel as tf`'s.",
        "",
        "**used in N examples**: in how many files of the official example code the name is "
        "used (keras-io's examples and guides, the TensorFlow tutorials and guides, PyTorch's "
        "tutorials; `tools/example_name_uses.py` says what counts as a use; methods called on a "
        f"tensor or dataset instance are not counted). Counted: {counted}",
        "",
        "| namespace | gpuaccel face | names | implemented | refused | out of scope | missing |",
        "|---|---|---|---|---|---|---|",
    ]
    sections, table = [], {}
    for namespace, framework, face_path in NAMESPACES:
        face = _resolve(face_path)
        rows = [(n, *status(face, namespace, n, framework, tests)) for n in names[namespace]]
        table[namespace] = rows
        used = uses.get(namespace, {})
        counts = {s: sum(1 for r in rows if r[1] == s)
                  for s in ("implemented", "refused", "out of scope", "missing")}
        total = len(rows) or 1
        lines.append(f"| `{namespace}` | `{face_path}` | {len(rows)} | " + " | ".join(
            f"{counts[s]} ({100 * counts[s] / total:.0f}%)" for s in counts) + " |")
        sections += ["", f"## `{namespace}`", ""]
        if face is None:
            sections += [f"gpuaccel has no `{face_path}` yet.", ""]
        sections += ["| name | status | used in N examples | detail |", "|---|---|---|---|"]
        sections += [f"| `{n}` | {s} | {used.get(n, 0)} | {d} |" for n, s, d in rows]
    return "\n".join(lines + most_used_not_implemented(table, uses) + sections) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when docs/api_coverage.md differs from a fresh run")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            old = OUTPUT.read_text().splitlines() if OUTPUT.exists() else []
            changed = [line for line in text.splitlines() if line not in set(old)][:20]
            sys.exit(f"{OUTPUT.relative_to(ROOT)} is stale; rerun "
                     f"`PYTHONPATH=build/dev/stage python3 tools/api_coverage.py` and commit it. "
                     f"New lines (first 20):\n" + "\n".join(changed))
        print(f"{OUTPUT.relative_to(ROOT)} is up to date")
        return
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
