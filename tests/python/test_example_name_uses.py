"""tools/example_name_uses.py counts in how many official example files each tracked name is
used (issue 30, part 2); these tests run it on a tiny synthetic example tree, as a plain folder
and as a git directory, to check the alias resolution, that a file counts once however often it
uses a name, and that prose (docstrings, markdown cells) and unimported heads do not count."""
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import api_coverage  # noqa: E402
import example_name_uses  # noqa: E402

NAMES = {"keras.layers": {"Dense", "Conv2D"}, "keras.ops": {"sum", "relu"},
         "tf": {"reduce_sum", "math", "keras", "float32"}, "tf.math": {"exp"},
         "torch": {"nn", "cat"}, "torch.Tensor": {"view"}, "torch.nn.functional": {"relu"}}

# The synthetic examples are lists of quoted lines: a line-initial `import tensorflow` would
# make tools/api_coverage.py take this file for a test that runs the framework.
ALIASES_PY = "\n".join([
    '"""A docstring naming layers.Conv2D is prose, not a use."""',
    'import tensorflow as tf',
    'from tensorflow import keras',
    'from keras import layers',
    '',
    'a = layers.Dense(3)',
    'b = layers.Dense(4)',
    'c = keras.layers.Dense(5)',
    'd = tf.keras.layers.Dense(6)',
    'e = tf.reduce_sum(tf.math.exp(x))',
    'f = x.view(2, 3)',
]) + "\n"

NOTEBOOK = {"cells": [
    {"cell_type": "code", "source": ["!pip install keras\n", "%matplotlib inline\n",
                                     "import torch.nn.functional as F\n", "from torch import nn\n",
                                     "from keras import ops\n"]},
    {"cell_type": "markdown", "source": ["Call `ops.relu(x)` here."]},
    {"cell_type": "code", "source": "y = F.relu(x)\nz = nn.functional.relu(y)\nw = ops.sum(z)\n"},
    {"cell_type": "code", "source": "def broken(:\n    ops.relu(x)\n"},
]}

FROM_IMPORT_PY = "\n".join([
    'from tensorflow.keras import layers',
    'from torch import cat as concatenate',
    'model = layers.Dense(1)',
]) + "\n"

NO_IMPORT_PY = "model = layers.Dense(1)\nz = torch.cat([a, b])\n"


def _write_tree(root):
    """A keras-io tree: three .py examples count; the notebook generated from one does not."""
    (root / "examples" / "vision" / "ipynb").mkdir(parents=True)
    (root / "guides").mkdir()
    (root / "examples" / "vision" / "aliases.py").write_text(ALIASES_PY)
    (root / "examples" / "vision" / "ipynb" / "aliases.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "guides" / "from_import.py").write_text(FROM_IMPORT_PY)
    (root / "examples" / "no_import.py").write_text(NO_IMPORT_PY)
    (root / "scripts").mkdir()  # outside examples/ and guides/: never read
    (root / "scripts" / "tool.py").write_text(ALIASES_PY)
    return root


def _write_tensorflow_docs_tree(root):
    """A tensorflow/docs tree: its notebooks are the examples."""
    (root / "site" / "en" / "tutorials").mkdir(parents=True)
    (root / "site" / "en" / "guide").mkdir()
    (root / "site" / "en" / "guide" / "notebook.ipynb").write_text(json.dumps(NOTEBOOK))
    return root


def _commit_all(tree):
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "examples", "--date=2024-01-11T12:00:00"], check=True,
                   env={"GIT_COMMITTER_DATE": "2024-01-11T12:00:00", "PATH": "/usr/bin:/bin"})
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _expected_uses():
    # `from tensorflow import keras` is keras itself: no `keras` use counts for tf
    return {"keras.layers": {"Dense": 2}, "keras.ops": {"sum": 1}, "tf": {"reduce_sum": 1},
            "tf.math": {"exp": 1}, "torch": {"cat": 1, "nn": 1}, "torch.Tensor": {},
            "torch.nn.functional": {"relu": 1}}


def test_counts_files_per_name_with_aliases_resolved_in_a_folder(tmp_path):
    keras_io = _write_tree(tmp_path / "keras-io")
    docs = _write_tensorflow_docs_tree(tmp_path / "docs")
    result = example_name_uses.count([keras_io, docs], NAMES)
    assert result["repositories"] == {
        "keras-team/keras-io": {"commit": None, "date": None, "files": 3},
        "tensorflow/docs": {"commit": None, "date": None, "files": 1}}
    assert result["not_counted"] == ["pytorch/tutorials"]
    assert result["uses"] == _expected_uses()


def test_reads_the_head_of_a_git_directory_and_records_its_copy(tmp_path):
    tree = _write_tree(tmp_path / "checkout")
    commit = _commit_all(tree)
    (tree / "examples" / "uncommitted.py").write_text("import torch\ntorch.cat([])\n")
    docs = _write_tensorflow_docs_tree(tmp_path / "docs")
    read_from = example_name_uses.parse_read_from(["keras-team/keras-io=someone/keras-io"])
    result = example_name_uses.count([tree / ".git", docs], NAMES, read_from)
    assert result["repositories"]["keras-team/keras-io"] == {
        "commit": commit, "date": "2024-01-11", "files": 3, "read_from": "someone/keras-io"}
    assert result["uses"] == _expected_uses()


@pytest.mark.parametrize("pair", ["keras-team/keras-io", "keras/keras-io=someone/keras-io",
                                  "pytorch/tutorials=tutorials-kr"])
def test_a_read_from_pair_of_the_wrong_form_is_refused(pair):
    with pytest.raises(ValueError, match="OFFICIAL=OWNER/NAME"):
        example_name_uses.parse_read_from([pair])


def test_a_folder_of_no_known_repository_is_refused(tmp_path):
    with pytest.raises(example_name_uses.NotAnExampleRepository, match="keras-team/keras-io"):
        example_name_uses.count([tmp_path], NAMES)


def test_most_used_missing_names_are_listed_most_used_first():
    table = {"tf": [("cast", "implemented", "`t.py`"), ("string", "refused", "use str instead"),
                    ("saved_model", "missing", ""), ("rare", "missing", "")],
             "keras.utils": [("get_file", "refused", "use urllib instead")]}
    uses = {"tf": {"cast": 40, "string": 12, "saved_model": 19, "rare": 5},
            "keras.utils": {"get_file": 27}}
    lines = api_coverage.most_used_not_implemented(table, uses)
    rows = [line for line in lines if line.startswith("| `")]
    assert rows == ["| `get_file` | `keras.utils` | 27 | refused | use urllib instead |",
                    "| `saved_model` | `tf` | 19 | missing |  |",
                    "| `string` | `tf` | 12 | refused | use str instead |"]
