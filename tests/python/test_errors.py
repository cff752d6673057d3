"""C++ typed errors arrive as TF's exception classes, carrying the op name."""
import pytest

import gpuaccel
from gpuaccel import errors

CASES = [
    ("InvalidArgumentError", errors.InvalidArgumentError),
    ("NotFoundError", errors.NotFoundError),
    ("FailedPreconditionError", errors.FailedPreconditionError),
    ("ResourceExhaustedError", errors.ResourceExhaustedError),
    ("UnimplementedError", errors.UnimplementedError),
    ("InternalError", errors.InternalError),
]


@pytest.mark.parametrize("code,cls", CASES)
def test_each_code_maps_to_its_class(code, cls):
    with pytest.raises(cls) as info:
        gpuaccel._C._raise_error_for_testing(code, "Conv2D", "something went wrong")
    assert info.value.op_name == "Conv2D"
    assert str(info.value) == "[Conv2D] something went wrong"
    assert isinstance(info.value, errors.OpError)


def test_invalid_argument_is_also_a_value_error():
    assert issubclass(errors.InvalidArgumentError, ValueError)


def test_value_and_runtime_errors_are_builtins():
    with pytest.raises(ValueError, match=r"\[op\] bad"):
        gpuaccel._C._raise_error_for_testing("ValueError", "op", "bad")
    with pytest.raises(RuntimeError, match="late"):
        gpuaccel._C._raise_error_for_testing("RuntimeError", "", "late")
