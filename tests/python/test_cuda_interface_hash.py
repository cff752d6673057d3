"""The CUDA library's interface version is a hash of the boundary's headers made at build time
(cmake/cuda_interface_hash.cmake), not a number bumped by hand: these tests run that CMake file
on a copy of cpp/ and check that it moves when the op list or a header the boundary includes
changes, and only then."""
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULE = REPO / "cmake" / "cuda_interface_hash.cmake"


@pytest.fixture
def source_copy(tmp_path):
    if shutil.which("cmake") is None:
        pytest.fail("cmake is needed to build gpuaccel and to run this test")
    shutil.copytree(REPO / "cpp", tmp_path / "cpp")
    return tmp_path


def interface_hash(source_dir):
    """Runs the CMake file in script mode from `source_dir` (its CMAKE_SOURCE_DIR)."""
    subprocess.run(["cmake", "-P", str(MODULE)], cwd=source_dir, check=True,
                   capture_output=True, text=True)
    header = (source_dir / "generated" / "core" / "cuda_interface_hash.h").read_text()
    return int(re.search(r"#define GPUACCEL_CUDA_INTERFACE_HASH (\d+)", header).group(1))


def append(path, text):
    path.write_text(path.read_text() + text)


def test_the_hash_is_stable_and_above_every_hand_bumped_version(source_copy):
    first = interface_hash(source_copy)
    assert interface_hash(source_copy) == first
    assert 2 ** 30 <= first < 2 ** 31  # never 1..14, the versions libraries once reported


def test_a_new_op_in_the_list_changes_the_hash(source_copy):
    before = interface_hash(source_copy)
    op_list = source_copy / "cpp" / "backends" / "backend_ops.def"
    text = op_list.read_text()
    line = ('GPUACCEL_BACKEND_KERNEL(negate_twice, (const TensorView& x, const TensorView& y), '
            '(x, y), "negate_twice")\n')
    op_list.write_text(text.replace("#undef GPUACCEL_BACKEND_KERNEL", line + "#undef GPUACCEL_BACKEND_KERNEL"))
    assert interface_hash(source_copy) != before


def test_a_struct_the_boundary_passes_changes_the_hash(source_copy):
    # conv_params.h is reached only through backend.h's includes.
    before = interface_hash(source_copy)
    append(source_copy / "cpp" / "backends" / "conv_params.h",
           "\nnamespace gpuaccel { struct Conv2dGroups { int groups = 1; }; }\n")
    assert interface_hash(source_copy) != before


def test_code_outside_the_boundary_leaves_the_hash(source_copy):
    before = interface_hash(source_copy)
    append(source_copy / "cpp" / "ops" / "nn.cc", "\n// an op frontend changed\n")
    append(source_copy / "cpp" / "backends" / "cpu" / "onednn_ops.h", "\n// a CPU kernel changed\n")
    assert interface_hash(source_copy) == before
