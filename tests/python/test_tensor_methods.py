"""The PyTorch face's creation functions (``gpuaccel._creation``) and tensor methods
(``gpuaccel._tensor_methods``): values against NumPy, in-place forms and autograd's rules for
them, ``requires_grad=`` leaves, TF Variable ``assign*``, and a PyTorch-autograd-tutorial-style
loop fitting a polynomial with manual updates under ``no_grad``."""
import numpy as np
import pytest

import gpuaccel as tf  # the TensorFlow face, for its Variable
import gpuaccel.torch as torch  # the PyTorch face, as course code imports it
from test_autograd import rnd


def test_dtype_aliases_answer_every_framework():
    assert torch.float is torch.float32 and torch.long is torch.int64
    assert torch.half is torch.float16 and torch.int is torch.int32
    x = torch.ones(2, dtype=torch.float)
    assert x.dtype == np.float32 and x.dtype.name == "float32" and x.dtype == "float32"
    assert x.element_size() == 4 and torch.ones(2, dtype=torch.half).element_size() == 2
    assert torch.zeros(2, 3).nelement() == 6


def test_creation_with_requires_grad_and_like_functions():
    torch.manual_seed(0)
    w = torch.randn(3, 2, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    (w * 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((3, 2), 2.0))
    u = torch.rand_like(w)
    assert tuple(u.shape) == (3, 2) and not u.requires_grad
    assert 0.0 <= float(u.min()) and float(u.max()) < 1.0
    assert tuple(torch.randn_like(u).shape) == (3, 2)
    np.testing.assert_array_equal(torch.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(torch.eye(2, 3).numpy(), np.eye(2, 3))
    np.testing.assert_allclose(torch.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(torch.full_like(w, 7.0).numpy(), np.full((3, 2), 7.0))
    r = torch.randint(3, 7, (1000,))
    assert r.dtype == torch.int64 and r.numpy().min() == 3 and r.numpy().max() == 6
    # A span beyond a float32's 24 random bits reached only every 2**(bits - 24)-th integer
    # (randint(0, 2**30) gave multiples of 64): now every integer is possible, and set_seed
    # still repeats them.
    torch.random.set_seed(5)
    wide = torch.randint(-2**40, 2**40, (4000,)).numpy()
    assert wide.min() >= -2**40 and wide.max() < 2**40
    assert len(set((wide % 64).tolist())) == 64 and len(set(wide.tolist())) == 4000
    torch.random.set_seed(5)
    np.testing.assert_array_equal(torch.randint(-2**40, 2**40, (4000,)).numpy(), wide)
    with pytest.raises(RuntimeError, match="floating point dtype"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)


def test_t_pow_add_mul_and_comparisons():
    a = rnd((2, 3))
    t = torch.tensor(a)
    np.testing.assert_array_equal(t.t().numpy(), a.T)
    np.testing.assert_allclose(t.pow(2).numpy(), a ** 2, rtol=1e-6)
    np.testing.assert_allclose(t.add(1.0, alpha=2).numpy(), a + 2.0, rtol=1e-6)
    np.testing.assert_allclose(t.mul(t).numpy(), a * a, rtol=1e-6)
    np.testing.assert_array_equal((t >= 0).numpy(), a >= 0)
    np.testing.assert_array_equal(t.le(0.5).numpy(), a <= 0.5)
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        torch.zeros(2, 2, 2).t()


def test_in_place_ops_write_into_the_tensor():
    t = torch.tensor([1.0, 2.0, 3.0])
    same = t.add_(1.0)
    assert same is t
    np.testing.assert_array_equal(t.numpy(), [2.0, 3.0, 4.0])
    t.mul_(torch.tensor([2.0, 0.5, 1.0])).sub_(1.0)
    np.testing.assert_array_equal(t.numpy(), [3.0, 0.5, 3.0])
    view = t[1:]
    view.zero_()  # a view shares memory, as in torch
    np.testing.assert_array_equal(t.numpy(), [3.0, 0.0, 0.0])
    t.fill_(2.5)
    np.testing.assert_array_equal(t.numpy(), [2.5, 2.5, 2.5])
    t += 1
    np.testing.assert_array_equal(t.numpy(), [3.5, 3.5, 3.5])
    t.clamp_(max=3.0)
    np.testing.assert_array_equal(t.numpy(), [3.0, 3.0, 3.0])


def test_in_place_on_a_tensor_that_requires_grad_follows_autograd_rules():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="in-place operation"):
        (w * 2).mul_(2.0)
    with torch.no_grad():
        w.mul_(3.0)
        w -= 1.0
    np.testing.assert_array_equal(w.detach().numpy(), [2.0, 2.0, 2.0])
    assert w.requires_grad and w.is_leaf
    w2 = torch.zeros(2).requires_grad_()
    assert w2.requires_grad
    assert not w2.requires_grad_(False).requires_grad


def test_variable_assign_methods_as_tensorflow():
    v = tf.Variable([1.0, 2.0])
    v.assign([5.0, 6.0])
    v.assign_add(np.array([1.0, 1.0], np.float32))
    v.assign_sub(torch.tensor([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [5.5, 6.5])
    with pytest.raises(ValueError, match="Cannot assign value of shape"):
        v.assign([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), [11.0, 13.0])


def test_expand_repeat_var_std_norm_and_type_casts():
    a = rnd((2, 3))
    t = torch.tensor(a)
    assert tuple(torch.tensor([[1.0], [2.0]]).expand(2, 4).shape) == (2, 4)
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_allclose(t.var(1).numpy(), a.var(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(t.std(unbiased=False).numpy(), a.std(), rtol=1e-5)
    assert float(t.norm()) == pytest.approx(float(np.linalg.norm(a)), rel=1e-5)
    assert t.long().dtype == torch.int64 and t.int().dtype == torch.int32
    assert t.type(torch.float16).dtype == torch.float16


def test_autograd_tutorial_style_polynomial_fit():
    """Fit y = sin(x) with a cubic by hand-written gradient descent (the shape of PyTorch's
    autograd tutorial), checked against NumPy's least-squares fit direction: the loss falls."""
    x_np = np.linspace(-np.pi, np.pi, 200).astype(np.float32)
    y = torch.tensor(np.sin(x_np))
    x = torch.tensor(x_np)
    torch.manual_seed(1)
    coeffs = [torch.randn((), requires_grad=True) for _ in range(4)]
    lr = 1e-6
    losses = []
    for _ in range(60):
        a, b, c, d = coeffs
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in coeffs:
                p -= lr * p.grad
                p.grad = None
    assert losses[-1] < 0.5 * losses[0]
    assert all(p.is_leaf and p.requires_grad for p in coeffs)


def test_equality_is_element_wise_and_hashing_by_identity():
    pred = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    y = torch.tensor([1, 0, 0])
    correct = (pred.argmax(1) == y).type(torch.float).sum().item()
    assert correct == 2.0
    np.testing.assert_array_equal((y != 0).numpy(), [True, False, False])
    np.testing.assert_array_equal((y == np.array([1, 1, 0])).numpy(), [True, False, True])
    assert (y == None) is False  # noqa: E711
    assert len({y: 1, pred: 2}) == 2 and y in {pred: 0, y: 1}


def test_unary_in_place_forms_and_neg_sign():
    a = rnd((4,))
    t = torch.tensor(a)
    assert t.sigmoid_() is t
    np.testing.assert_allclose(t.numpy(), 1 / (1 + np.exp(-a)), rtol=1e-6)
    t.neg_().exp_()
    np.testing.assert_allclose(t.numpy(), np.exp(-1 / (1 + np.exp(-a))), rtol=1e-6)
    np.testing.assert_array_equal(torch.tensor([-2.0, 0.0, 3.0]).sign().numpy(), [-1, 0, 1])
    np.testing.assert_array_equal(torch.tensor([1.0]).neg().numpy(), [-1.0])
    with pytest.raises(RuntimeError, match="in-place"):
        torch.ones(2, requires_grad=True).relu_()
