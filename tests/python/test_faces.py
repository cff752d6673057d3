"""One name, one meaning per face (issue 30, part 0): ``import gpuaccel as tf`` gives every
colliding name TensorFlow's meaning and ``import gpuaccel.torch as torch`` PyTorch's, each
checked against the real framework (TensorFlow in-process, PyTorch 1.13 through
torch_reference); a torch-style call at the TensorFlow top level is refused with an error that
names both meanings and both imports; the faces share one Tensor class."""
import numpy as np
import pytest
import tensorflow as real_tf

import gpuaccel as tf
import gpuaccel.torch as torch
import torch_reference

VECTOR = np.arange(6, dtype=np.float32)
MATRIX = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32)
INDEX = np.array([[0, 2], [1, 1]], np.int64)


def _values(pieces):
    return [np.asarray(p.numpy()).tolist() for p in pieces]


def test_tensorflow_face_has_tensorflow_meanings():
    assert _values(tf.split(VECTOR, 2)) == _values(real_tf.split(VECTOR, 2))
    np.testing.assert_array_equal(tf.argmax(MATRIX).numpy(), real_tf.argmax(MATRIX).numpy())
    np.testing.assert_array_equal(tf.argmin(MATRIX).numpy(), real_tf.argmin(MATRIX).numpy())
    np.testing.assert_array_equal(tf.where(MATRIX > 1.5).numpy(),
                                  real_tf.where(MATRIX > 1.5).numpy())
    other = MATRIX.copy()
    other[0, 1] = -1.0
    np.testing.assert_array_equal(tf.equal(MATRIX, other).numpy(),
                                  real_tf.equal(MATRIX, other).numpy())
    np.testing.assert_array_equal(tf.range(1, 4).numpy(), real_tf.range(1, 4).numpy())
    np.testing.assert_array_equal(tf.transpose(MATRIX).numpy(),
                                  real_tf.transpose(MATRIX).numpy())
    np.testing.assert_array_equal(tf.gather(MATRIX, [1, 0], axis=1).numpy(),
                                  real_tf.gather(MATRIX, [1, 0], axis=1).numpy())
    # TF's statistics are the population's (torch's std/var are Bessel-corrected)
    np.testing.assert_allclose(tf.math.reduce_std(MATRIX).numpy(),
                               real_tf.math.reduce_std(MATRIX).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tf.math.reduce_variance(MATRIX, axis=1).numpy(),
                               real_tf.math.reduce_variance(MATRIX, axis=1).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(tf.concat([MATRIX, MATRIX], 1).numpy(),
                                  real_tf.concat([MATRIX, MATRIX], 1).numpy())
    np.testing.assert_array_equal(tf.squeeze(MATRIX[None], axis=0).numpy(),
                                  real_tf.squeeze(MATRIX[None], axis=0).numpy())


TORCH_SNIPPET = """
v, m, i = torch.tensor(v), torch.tensor(m), torch.tensor(i)
out["split2"] = [p.tolist() for p in torch.split(v, 2)]
out["split_sizes"] = [p.tolist() for p in torch.split(v, [1, 5])]
out["argmax"] = int(torch.argmax(m))
out["argmin"] = int(torch.argmin(m))
out["argmax_keep"] = list(torch.argmax(m, keepdim=True).shape)
out["argmax_dim"] = torch.argmax(m, dim=1).numpy()
out["where1"] = [t.numpy().tolist() for t in torch.where(m > 1.5)]
out["equal"] = torch.equal(m, m.clone())
out["equal_shape"] = torch.equal(m, m[:1])
out["range"] = torch.range(1, 4).numpy()
out["range_dtype"] = str(torch.range(1, 4).dtype)
out["range_step"] = torch.range(0, 1, 0.25).numpy()
out["transpose"] = torch.transpose(m, 0, 1).numpy()
out["gather"] = torch.gather(m, 1, i).numpy()
out["std"] = torch.std(m).numpy()
out["var_dim"] = torch.var(m, 1).numpy()
out["sum_dim"] = torch.sum(m, dim=1, keepdim=True).numpy()
out["max_dim"] = [torch.max(m, 1).values.numpy().tolist(), torch.max(m, 1).indices.tolist()]
out["concat"] = torch.concat([m, m], 1).numpy()
out["norm"] = torch.norm(m).numpy()
out["squeeze"] = list(torch.squeeze(m[None], 0).shape)
"""


def test_torch_face_has_pytorch_meanings():
    ref = torch_reference.run(TORCH_SNIPPET, v=VECTOR, m=MATRIX, i=INDEX)
    assert "error" not in ref, ref
    v, m = torch.tensor(VECTOR), torch.tensor(MATRIX)
    assert _values(torch.split(v, 2)) == ref["split2"]
    assert _values(torch.split(v, [1, 5])) == ref["split_sizes"]
    assert int(torch.argmax(m)) == ref["argmax"] and int(torch.argmin(m)) == ref["argmin"]
    assert list(torch.argmax(m, keepdim=True).shape) == ref["argmax_keep"]
    np.testing.assert_array_equal(torch.argmax(m, dim=1).numpy(), ref["argmax_dim"])
    assert [t.numpy().tolist() for t in torch.where(m > 1.5)] == ref["where1"]
    assert torch.equal(m, torch.tensor(MATRIX)) is ref["equal"]
    assert torch.equal(m, m[:1]) is ref["equal_shape"]
    np.testing.assert_array_equal(torch.range(1, 4).numpy(), ref["range"])
    assert ref["range_dtype"] == "torch.float32" and torch.range(1, 4).dtype == torch.float32
    np.testing.assert_array_equal(torch.range(0, 1, 0.25).numpy(), ref["range_step"])
    np.testing.assert_array_equal(torch.transpose(m, 0, 1).numpy(), ref["transpose"])
    np.testing.assert_array_equal(torch.gather(m, 1, torch.tensor(INDEX)).numpy(),
                                  ref["gather"])
    np.testing.assert_allclose(torch.std(m).numpy(), ref["std"], rtol=1e-6)
    np.testing.assert_allclose(torch.var(m, 1).numpy(), ref["var_dim"], rtol=1e-6)
    np.testing.assert_allclose(torch.sum(m, dim=1, keepdim=True).numpy(), ref["sum_dim"])
    values, indices = torch.max(m, 1)
    assert [values.numpy().tolist(), indices.tolist()] == ref["max_dim"]
    np.testing.assert_array_equal(torch.concat([m, m], 1).numpy(), ref["concat"])
    np.testing.assert_allclose(torch.norm(m).numpy(), ref["norm"], rtol=1e-6)
    assert list(torch.squeeze(m[None], 0).shape) == ref["squeeze"]


@pytest.mark.parametrize("name", ["boolean_mask", "scatter_nd"])
def test_tensorflow_only_names_on_the_torch_face_point_to_the_tensorflow_face(name):
    assert callable(getattr(tf, name))
    with pytest.raises(AttributeError, match=f"torch.{name} is TensorFlow's name"):
        getattr(torch, name)


def test_topk_is_torchs_on_the_torch_face_and_refused_for_top_k_on_the_tensorflow_face():
    # tf.sort, tf.math.top_k and tf.cumsum are compared with TensorFlow in test_tf_nn_breadth.py
    values, indices = torch.topk(torch.tensor(VECTOR[::-1].copy()), 2)
    np.testing.assert_allclose(values.numpy(), [5.0, 4.0])
    assert indices.tolist() == [0, 1]
    with pytest.raises(AttributeError, match=r"gpuaccel.topk is not supported by gpuaccel yet; "
                                             r"use math.top_k"):
        tf.topk  # noqa: B018


@pytest.mark.parametrize("call, name", [
    (lambda: tf.split(VECTOR, 2, dim=0), "split"),
    (lambda: tf.argmax(MATRIX, dim=1), "argmax"),
    (lambda: tf.argmin(MATRIX, dim=0), "argmin"),
    (lambda: tf.transpose(MATRIX, 0, 1), "transpose"),
    (lambda: tf.gather(MATRIX, 1, INDEX), "gather"),
    (lambda: tf.gather(MATRIX, dim=1, index=INDEX), "gather"),
])
def test_torch_style_calls_at_the_tensorflow_top_level_are_refused(call, name):
    with pytest.raises(TypeError) as caught:
        call()
    text = str(caught.value)
    assert f"gpuaccel.{name} is ambiguous" in text
    assert f"tf.{name}(" in text and f"torch.{name}(" in text
    assert '"import gpuaccel as tf"' in text and '"import gpuaccel.torch as torch"' in text


def test_torch_face_points_tensorflow_names_to_the_tensorflow_face():
    with pytest.raises(AttributeError, match='TensorFlow\'s name.*"import gpuaccel as tf"'):
        torch.reduce_sum  # noqa: B018
    with pytest.raises(AttributeError, match="torch.fill is not supported.*full_like"):
        torch.fill  # noqa: B018
    with pytest.raises(AttributeError,
                       match="torch.nn.ConvTranspose2d is not supported.*Conv2DTranspose"):
        torch.nn.ConvTranspose2d  # noqa: B018


def test_faces_share_tensors_devices_and_modules():
    import gpuaccel.torch.nn.functional as F
    made_by_torch = torch.ones(2, 3)
    assert type(made_by_torch) is type(tf.ones([2, 3])) is tf.Tensor is torch.Tensor
    np.testing.assert_array_equal(tf.reduce_sum(made_by_torch, axis=1).numpy(), [3.0, 3.0])
    assert F is tf.nn.functional and torch.cuda is tf.cuda
    assert torch.float is tf.float32 and torch.device is tf.device
