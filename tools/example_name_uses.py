"""Counts, for each public name of the namespaces tools/api_coverage.py tracks, in how many
files of the field's official example code the name is used (issue 30, part 2), and writes
tools/example_name_uses.json.

Why: the coverage table lists hundreds of missing names; course code uses a few of them a lot
and most of them never. Counting the uses in keras-io's examples and guides, the TensorFlow
tutorials and guides and PyTorch's tutorials tells the next engineer which names to implement
first. The JSON is committed, so tools/api_coverage.py (and CI) need no download: only counts
(facts) are kept, nothing of the examples themselves.

    python3 tools/example_name_uses.py REPO [REPO ...] [--read-from OFFICIAL=COPY ...]

Each REPO is a bare git directory (its HEAD is read, as `fetch` leaves them under /work/.mirror)
or a plain folder (a checkout); which of the three repositories it is follows from its tree
(SOURCES). Where the official repository is too big to fetch, a copy of it can be counted
instead (a fork whose HEAD is an upstream commit, or a translation whose code cells are
upstream's): ``--read-from keras-team/keras-io=chicham/keras-io`` records in the JSON which
repository the files were read from, next to the commit and its date. Only the files SOURCES
names count: keras-io's and PyTorch's ``.py`` files (keras-io's ``ipynb/`` and ``md/`` folders
are generated from them), the TensorFlow docs' notebooks and ``.py`` files. What counts as a use of ``name`` in ``namespace``, in one file's code (the .py file,
or an .ipynb's code cells, IPython's ``!``/``%`` lines dropped):

- an attribute chain whose head is an imported module alias and that resolves to
  ``namespace.name``: ``tf.reduce_sum``, ``layers.Dense`` after ``from keras import layers``,
  ``tf.keras.layers.Dense``, ``F.relu`` after ``import torch.nn.functional as F``,
  ``nn.functional.relu`` after ``from torch import nn`` (``tensorflow.keras``, ``keras_core``
  and ``tf_keras`` count as ``keras``); the longest tracked namespace wins, so
  ``tf.math.exp`` counts for tf.math, not as ``tf.math`` in tf;
- ``from namespace import name``.
Only names that exist in the real framework's namespace count. Methods called on instances are
ambiguous (``x.view(``, ``ds.batch(`` say nothing of x's type), so torch.Tensor and
tf.data.Dataset count only their explicit uses (``torch.Tensor.add``,
``tf.data.Dataset.from_tensor_slices``). Code that Python's parser rejects is skipped (a file's
other cells still count).
"""
import argparse
import ast
import datetime
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from api_coverage import NAMESPACES, real_names  # noqa: E402

OUTPUT = pathlib.Path(__file__).resolve().parent / "example_name_uses.json"

# repository: the folders whose example files count (a tree holding all of them is that
# repository)
SOURCES = {
    "keras-team/keras-io": ("examples", "guides"),
    "tensorflow/docs": ("site/en/tutorials", "site/en/guide"),
    "pytorch/tutorials": ("beginner_source", "intermediate_source", "advanced_source",
                          "recipes_source"),
}
# repository: the file endings that are example code there; keras-io's notebooks are generated
# copies of its .py files, so counting both would count each example twice
EXAMPLE_SUFFIXES = {
    "keras-team/keras-io": (".py",),
    "tensorflow/docs": (".py", ".ipynb"),
    "pytorch/tutorials": (".py",),
}

# Module paths that name the same namespaces as the left side of NAMESPACES (first match wins).
CANONICAL_PREFIXES = [("tensorflow.keras", "keras"), ("keras_core", "keras"),
                      ("tf_keras", "keras"), ("tensorflow", "tf")]


class NotAnExampleRepository(ValueError):
    """A path given to the counter is none of SOURCES' repositories."""


def canonical(dotted):
    """``tensorflow.keras.layers.Dense`` -> ``keras.layers.Dense``; ``tensorflow.nn.relu`` ->
    ``tf.nn.relu``."""
    for prefix, replacement in CANONICAL_PREFIXES:
        if dotted == prefix or dotted.startswith(prefix + "."):
            return replacement + dotted[len(prefix):]
    return dotted


def _code_chunks(path, text):
    """The pieces of Python code of one example file: the file itself, or a notebook's code
    cells with IPython's shell and magic lines dropped."""
    if not path.endswith(".ipynb"):
        return [text]
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return []
    chunks = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        chunks.append("\n".join(line for line in source.splitlines()
                                if not line.lstrip().startswith(("!", "%"))))
    return chunks


def _dotted(node):
    """``a.b.c`` of an Attribute chain rooted at a Name, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _namespace_name(dotted, namespaces, names):
    """(namespace, name) that a canonical dotted path is a use of, or None."""
    for namespace in namespaces:  # longest first
        if dotted.startswith(namespace + "."):
            name = dotted[len(namespace) + 1:].split(".", 1)[0]
            return (namespace, name) if name in names[namespace] else None
    return None


def names_used(path, text, names):
    """The set of (namespace, name) one example file uses; ``names`` is {namespace: public
    names} (api_coverage.real_names' first result)."""
    trees = []
    for chunk in _code_chunks(path, text):
        try:
            trees.append(ast.parse(chunk))
        except (SyntaxError, ValueError):
            continue
    namespaces = sorted(names, key=len, reverse=True)
    aliases, used = {}, set()
    for tree in trees:  # imports first: a notebook's later cells use an earlier cell's aliases
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:  # `import torch.nn` binds `torch`
                        top = alias.name.split(".", 1)[0]
                        aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    full = f"{node.module}.{alias.name}"
                    aliases[alias.asname or alias.name] = full
                    found = _namespace_name(canonical(full), namespaces, names)
                    if found:
                        used.add(found)
    for tree in trees:
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:
                continue  # only whole chains: `tf.math.exp`, not its `tf.math`
            dotted = _dotted(node)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head not in aliases:
                continue
            found = _namespace_name(canonical(f"{aliases[head]}.{rest}"), namespaces, names)
            if found:
                used.add(found)
    return used


def _is_git_dir(path):
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def identify(path):
    """(repository name, commit id or None for a plain folder) of one path given."""
    git = _is_git_dir(path)
    for repo, folders in SOURCES.items():
        if git:
            found = all(subprocess.run(["git", f"--git-dir={path}", "cat-file", "-e",
                                        f"HEAD:{folder}"], capture_output=True).returncode == 0
                        for folder in folders)
        else:
            found = all((path / folder).is_dir() for folder in folders)
        if found:
            commit = None
            if git:
                commit = subprocess.run(["git", f"--git-dir={path}", "rev-parse", "HEAD"],
                                        capture_output=True, text=True, check=True).stdout.strip()
            return repo, commit
    raise NotAnExampleRepository(
        f"{path} is none of {', '.join(SOURCES)}: expected a bare git directory or a folder "
        f"holding all the folders of one: {SOURCES}")


def example_files(path, repo):
    """Yields (relative path, text) of the repository's .py and .ipynb example files."""
    folders = SOURCES[repo]
    suffixes = EXAMPLE_SUFFIXES[repo]
    if not _is_git_dir(path):
        for folder in folders:
            for file in sorted((path / folder).rglob("*")):
                if file.is_file() and file.name.endswith(suffixes):
                    yield str(file.relative_to(path)), file.read_text(errors="replace")
        return
    listed = subprocess.run(["git", f"--git-dir={path}", "ls-tree", "-r", "--name-only", "HEAD",
                             "--", *folders], capture_output=True, text=True, check=True)
    for relative in listed.stdout.splitlines():
        if relative.endswith(suffixes):
            shown = subprocess.run(["git", f"--git-dir={path}", "show", f"HEAD:{relative}"],
                                   capture_output=True, check=True)
            yield relative, shown.stdout.decode(errors="replace")


def _commit_date(path, commit):
    """The committer date (YYYY-MM-DD) of a commit of the git directory at ``path``, or None."""
    if commit is None:
        return None
    return subprocess.run(["git", f"--git-dir={path}", "show", "-s", "--format=%cs", commit],
                          capture_output=True, text=True, check=True).stdout.strip()


def parse_read_from(pairs):
    """{official repository: the copy read instead} from ``OFFICIAL=OWNER/NAME`` strings."""
    read_from = {}
    for pair in pairs:
        official, _, copy = pair.partition("=")
        if official not in SOURCES or copy.count("/") != 1:
            raise ValueError(f"--read-from takes OFFICIAL=OWNER/NAME with OFFICIAL one of "
                             f"{', '.join(SOURCES)}, got {pair!r}")
        read_from[official] = copy
    return read_from


def count(paths, names, read_from=None):
    """{"repositories": {repo: {"commit", "date", "files"[, "read_from"]}}, "not_counted":
    [SOURCES' repositories not given], "uses": {namespace: {name: files}}} over the
    repositories at ``paths``; ``read_from`` is {official repository: the copy at its path}."""
    read_from = read_from or {}
    uses = {namespace: {} for namespace in names}
    repositories = {}
    for path in map(pathlib.Path, paths):
        repo, commit = identify(path)
        scanned = 0
        for relative, text in example_files(path, repo):
            scanned += 1
            for namespace, name in names_used(relative, text, names):
                uses[namespace][name] = uses[namespace].get(name, 0) + 1
        repositories[repo] = {"commit": commit, "date": _commit_date(path, commit),
                              "files": scanned}
        if repo in read_from:
            repositories[repo]["read_from"] = read_from[repo]
    return {"repositories": repositories,
            "not_counted": [repo for repo in SOURCES if repo not in repositories],
            "uses": {ns: dict(sorted(found.items())) for ns, found in uses.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="+", help="bare git directories or folders of "
                                                 + ", ".join(SOURCES))
    parser.add_argument("--read-from", action="append", default=[], metavar="OFFICIAL=COPY",
                        help="the repository given for OFFICIAL is the copy OWNER/NAME "
                             "(a fork or translation), recorded in the output")
    parser.add_argument("--output", default=str(OUTPUT))
    args = parser.parse_args()
    try:
        read_from = parse_read_from(args.read_from)
    except ValueError as error:
        parser.error(str(error))
    names = {namespace: set(found) for namespace, found in real_names()[0].items()
             if namespace in {n for n, _, _ in NAMESPACES}}
    result = count(args.repos, names, read_from)
    result = {"generated": datetime.date.today().isoformat(),
              "counted": "example files using the name, see tools/example_name_uses.py",
              **result}
    pathlib.Path(args.output).write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    print(f"wrote {args.output}: " + ", ".join(
        f"{repo} {info['files']} files" for repo, info in result["repositories"].items()))


if __name__ == "__main__":
    main()
