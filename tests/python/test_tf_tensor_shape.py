"""``gpuaccel.TensorShape`` against TensorFlow's ``tf.TensorShape``: each expression runs on both
(with ``S`` the class) and gives the same value (shapes compared by their dims), or the same
error type and text."""
import numpy as np
import pytest
import tensorflow as tf

import gpuaccel as gt
from tf_comparison import raised

EXPRESSIONS = [
    "S([16, None, 256]).as_list()", "S([16, None, 256]).rank", "S([16, None, 256]).ndims",
    "S(None).rank", "S([]).rank", "len(S([2, 3]))", "S([2, None])[1]", "S([2, None, 4])[1:]",
    "S([2, None, 4])[-1]", "S(None)[0]", "S(None)[1:]", "list(S([2, None]))",
    "S([2, 3]).is_fully_defined()", "S([2, None]).is_fully_defined()",
    "S(None).is_fully_defined()", "S([2, 3, 4]).num_elements()", "S([2, None]).num_elements()",
    "S([]).num_elements()", "S([1, None]).merge_with([None, 3])", "S(None).merge_with([1, 2])",
    "S([1, 2]).merge_with(S(None))", "S([1, 2]).merge_with([2, 2])",
    "S([1, 2]).merge_with([1, 2, 3])", "S([1, 2]).is_compatible_with([None, 2])",
    "S([1, 2]).is_compatible_with([1])", "S(None).is_compatible_with([4, 5])",
    "S([1, 2]).concatenate([3])", "S([1, 2]).concatenate(S(None))", "S([1, 2]) + [3]",
    "[0] + S([1])", "S([None, 2]).most_specific_compatible_shape([3, 2])",
    "S([1, 2]).most_specific_compatible_shape([1])", "S([2, 2]).with_rank(2)",
    "S(None).with_rank(3)", "S([2, 2]).with_rank(3)", "S([2]).with_rank_at_least(1)",
    "S([2]).with_rank_at_least(2)", "S([2, 3]).with_rank_at_most(1)",
    "S([1, 2]).assert_is_compatible_with([2, 2])", "S([1]).assert_same_rank([1, 2])",
    "S([1, None]).assert_is_fully_defined()", "S([1, 2]).assert_has_rank(3)",
    "S([2, 3]) == S([2, 3])", "S([2, 3]) == (2, 3)", "S([None]) == S([None])",
    "S([2, 3]) != S([2, 4])", "S(None) == S(None)", "bool(S([]))", "bool(S(None))",
    "hash(S([2, 3])) == hash(S((2, 3)))", "repr(S([16, None]))", "repr(S(None))",
    "repr(S([]))", "str(S([16, None, 256]))", "str(S([5]))", "str(S(None))", "str(S([]))",
    "S(7).as_list()", "S(S([1, 2])).as_list()", "S(np.array([3, 4])).as_list()",
    "S([1.5])", "S('ab')", "S([-1])", "len(S(None))", "S(None).as_list()",
]


def _value(shape_class, expression):
    """The expression's value (a shape as ("shape", its dims)), or ("error", (type, text))."""
    scope = {"S": shape_class, "np": np}
    error = raised(eval, expression, scope)
    if error is not None:
        return ("error", error)
    value = eval(expression, scope)  # noqa: S307 - the test's own expressions
    if isinstance(value, (gt.TensorShape, tf.TensorShape)):
        return ("shape", None if value.rank is None else value.as_list())
    return value


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_tensor_shape_matches_tensorflow(expression):
    assert _value(gt.TensorShape, expression) == _value(tf.TensorShape, expression)


def test_a_tensor_shape_is_a_dataset_spec_and_a_shape_argument():
    spec = gt.TensorSpec(gt.TensorShape([None, 3]))
    assert spec.shape == (None, 3)
    np.testing.assert_array_equal(gt.zeros(gt.TensorShape([2, 3])).numpy(), np.zeros((2, 3)))
