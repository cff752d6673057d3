"""PyTorch's Tensor methods and top-level functions of ``import gpuaccel.torch as torch`` against
PyTorch 1.13 (torch_reference): each expression below runs twice, once with gpuaccel's face as
``torch`` and its tensors, once with the real torch, and the outputs (count, dtype, shape,
values) and, for the differentiable ones, the gradients of every float input are compared.
Most names appear twice: as the method (``x.cosh()``) and as the function (``torch.cosh(x)``)."""
import numpy as np
import pytest

import gpuaccel.torch as torch
import torch_reference


def _rnd(shape, seed, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


INPUTS = {
    "x": _rnd((3, 4), 1),
    "y": _rnd((3, 4), 2),
    "pos": _rnd((3, 4), 3, 0.2, 3.0),
    "unit": _rnd((3, 4), 4, -0.9, 0.9),
    "big": _rnd((3, 4), 5, 1.2, 4.0),
    "i": np.random.default_rng(6).integers(-5, 6, (3, 4)).astype(np.int64),
    "j": np.random.default_rng(7).integers(1, 4, (3, 4)).astype(np.int64),
    "mask": np.random.default_rng(8).uniform(size=(3, 4)) > 0.5,
    "v": _rnd((4,), 9),
    "w": _rnd((3,), 10),
    "m": _rnd((4, 5), 11),
    "sq": _rnd((4, 4), 12),
    "ba": _rnd((2, 3, 4), 13),
    "bb": _rnd((2, 4, 5), 14),
    "c": _rnd((3, 5), 15),
    "t3": _rnd((2, 3, 4), 16),
    "halves": np.array([[0.5, 1.5, 2.5, -0.5], [-1.5, -2.5, 3.5, 0.49]], np.float32),
    "idx": np.array([[0, 2, 1, 0], [3, 1, 0, 2], [1, 1, 3, 0]], np.int64),
}

# (expression, the inputs to differentiate)
EXPRESSIONS = [
    # element-wise, method and function forms
    ("x.abs()", "x"), ("torch.abs(x)", "x"), ("x.absolute()", "x"), ("torch.absolute(x)", "x"),
    ("x.neg()", "x"), ("torch.neg(x)", "x"), ("x.negative()", "x"), ("torch.negative(x)", "x"),
    ("x.positive()", "x"), ("torch.positive(x)", "x"),
    ("x.exp()", "x"), ("torch.exp(x)", "x"), ("x.exp2()", "x"), ("torch.exp2(x)", "x"),
    ("x.expm1()", "x"), ("torch.expm1(x)", "x"),
    ("pos.log()", "pos"), ("torch.log(pos)", "pos"), ("pos.log2()", "pos"),
    ("torch.log2(pos)", "pos"), ("pos.log10()", "pos"), ("torch.log10(pos)", "pos"),
    ("pos.log1p()", "pos"), ("torch.log1p(pos)", "pos"),
    ("pos.sqrt()", "pos"), ("torch.sqrt(pos)", "pos"), ("pos.rsqrt()", "pos"),
    ("torch.rsqrt(pos)", "pos"), ("x.square()", "x"), ("torch.square(x)", "x"),
    ("pos.reciprocal()", "pos"), ("torch.reciprocal(pos)", "pos"),
    ("x.relu()", "x"), ("torch.relu(x)", "x"), ("x.sigmoid()", "x"), ("torch.sigmoid(x)", "x"),
    ("x.tanh()", "x"), ("torch.tanh(x)", "x"), ("x.sign()", ""), ("torch.sign(x)", ""),
    ("x.sgn()", ""), ("torch.sgn(x)", ""), ("x.signbit()", ""), ("torch.signbit(x)", ""),
    ("x.sinh()", "x"), ("torch.sinh(x)", "x"), ("x.cosh()", "x"), ("torch.cosh(x)", "x"),
    ("x.asinh()", "x"), ("torch.asinh(x)", "x"), ("x.arcsinh()", "x"), ("torch.arcsinh(x)", "x"),
    ("big.acosh()", "big"), ("torch.acosh(big)", "big"), ("big.arccosh()", "big"),
    ("torch.arccosh(big)", "big"), ("unit.atanh()", "unit"), ("torch.atanh(unit)", "unit"),
    ("unit.arctanh()", "unit"), ("torch.arctanh(unit)", "unit"),
    ("x.deg2rad()", "x"), ("torch.deg2rad(x)", "x"), ("x.rad2deg()", "x"),
    ("torch.rad2deg(x)", "x"), ("(unit * 0.5 + 0.5).logit()", "unit"),
    ("torch.logit(unit * 0.5 + 0.5, eps=0.3)", ""),
    ("x.trunc()", ""), ("torch.trunc(x)", ""), ("x.fix()", ""), ("torch.fix(x)", ""),
    ("x.floor()", ""), ("torch.floor(x)", ""), ("x.ceil()", ""), ("torch.ceil(x)", ""),
    ("halves.round()", ""), ("torch.round(halves)", ""), ("x.round(decimals=1)", ""),
    ("x.frac()", "x"), ("torch.frac(x)", "x"), ("i.floor()", ""),
    ("x.fmod(1.5)", "x"), ("torch.fmod(x, y)", "x"), ("x.remainder(1.5)", "x"),
    ("torch.remainder(x, y)", "x"), ("i.remainder(3)", ""), ("i.fmod(j)", ""),
    ("x.floor_divide(y)", ""), ("torch.floor_divide(i, j)", ""),
    ("x.div(y)", "x,y"), ("torch.div(x, y, rounding_mode='floor')", ""),
    ("x.div(y, rounding_mode='trunc')", ""), ("i.div(j)", ""), ("i.div(j, rounding_mode='floor')", ""),
    ("x.divide(y)", "x,y"), ("torch.divide(x, 2.0)", "x"), ("x.true_divide(y)", "x,y"),
    ("torch.true_divide(i, j)", ""),
    ("x.add(y, alpha=2)", "x,y"), ("torch.add(x, y)", "x,y"), ("x.sub(y, alpha=0.5)", "x,y"),
    ("torch.sub(x, y)", "x,y"), ("x.subtract(y)", "x,y"), ("torch.subtract(x, y, alpha=3)", "x,y"),
    ("x.mul(y)", "x,y"), ("torch.mul(x, 3)", "x"), ("x.multiply(y)", "x,y"),
    ("torch.multiply(x, y)", "x,y"), ("pos.pow(1.5)", "pos"), ("torch.pow(pos, y)", "pos,y"),
    ("x.hypot(y)", "x,y"), ("torch.hypot(x, y)", "x,y"), ("x.logaddexp(y)", "x,y"),
    ("torch.logaddexp(x, y)", "x,y"), ("x.logaddexp2(y)", "x,y"), ("torch.logaddexp2(x, y)", "x,y"),
    ("x.xlogy(pos)", "x,pos"), ("torch.xlogy(x * mask, pos)", "x,pos"),
    ("x.lerp(y, 0.3)", "x,y"), ("torch.lerp(x, y, pos)", "x,y,pos"),
    ("x.addcmul(y, pos, value=0.5)", "x,y,pos"), ("torch.addcmul(x, y, pos)", "x,y,pos"),
    ("x.addcdiv(y, pos, value=2)", "x,y,pos"), ("torch.addcdiv(x, y, pos)", "x,y,pos"),
    ("x.maximum(y)", "x,y"), ("torch.maximum(x, y)", "x,y"), ("x.minimum(y)", "x,y"),
    ("torch.minimum(x, y)", "x,y"), ("x.fmax(y)", "x,y"), ("torch.fmax(x, y)", "x,y"),
    ("x.fmin(y)", "x,y"), ("torch.fmin(x, y)", "x,y"),
    ("x.clamp(-0.5, 0.7)", "x"), ("torch.clamp(x, min=-1.0)", "x"), ("x.clip(max=0.3)", "x"),
    ("torch.clip(x, -0.2, 0.2)", "x"), ("x.clamp_min(0.1)", "x"), ("torch.clamp_min(x, 0.1)", "x"),
    ("x.clamp_max(0.1)", "x"), ("torch.clamp_max(x, 0.1)", "x"),
    ("x.masked_fill(mask, -1.5)", "x"), ("x.masked_fill(mask, torch.tensor(2.0))", "x"),
    ("x.where(mask, y)", "x,y"), ("torch.where(mask, x, y)", "x,y"),
    # comparisons and logic
    ("x.eq(y)", ""), ("torch.eq(x, x * mask)", ""), ("x.ne(y)", ""), ("torch.ne(i, 0)", ""),
    ("x.gt(y)", ""), ("torch.gt(x, 0.5)", ""), ("x.ge(y)", ""), ("torch.ge(i, j)", ""),
    ("x.lt(y)", ""), ("torch.lt(x, y)", ""), ("x.le(y)", ""), ("torch.le(i, 1)", ""),
    ("x.greater(y)", ""), ("torch.greater(x, y)", ""), ("x.greater_equal(y)", ""),
    ("torch.greater_equal(x, y)", ""), ("x.less(y)", ""), ("torch.less(x, y)", ""),
    ("x.less_equal(y)", ""), ("torch.less_equal(x, y)", ""), ("x.not_equal(y)", ""),
    ("torch.not_equal(i, j)", ""), ("x == y", ""), ("x != x * mask", ""), ("x >= y", ""),
    ("x.logical_and(mask)", ""), ("torch.logical_and(i, mask)", ""), ("x.logical_or(mask)", ""),
    ("torch.logical_or(i, mask)", ""), ("x.logical_not()", ""), ("torch.logical_not(i)", ""),
    ("x.logical_xor(mask)", ""), ("torch.logical_xor(i, mask)", ""),
    ("x.isnan()", ""), ("torch.isnan(x)", ""), ("x.isinf()", ""), ("torch.isinf(x / i)", ""),
    ("x.isfinite()", ""), ("torch.isfinite(x / i)", ""), ("(x / i).isposinf()", ""),
    ("torch.isposinf(x / i)", ""), ("(x / i).isneginf()", ""), ("torch.isneginf(x / i)", ""),
    ("x.isreal()", ""), ("torch.isreal(x)", ""),
    ("x.allclose(x + 1e-7)", ""), ("torch.allclose(x, y)", ""), ("x.isclose(x + 1e-7)", ""),
    ("torch.isclose(x, y)", ""), ("x.equal(x + 0)", ""), ("torch.equal(x, y)", ""),
    # reductions
    ("x.sum()", "x"), ("torch.sum(x, 1)", "x"), ("x.sum(dim=0, keepdim=True)", "x"),
    ("x.sum((0, 1))", "x"), ("i.sum()", ""), ("mask.sum(1)", ""),
    ("x.mean()", "x"), ("torch.mean(x, dim=-1)", "x"), ("x.mean(0, keepdim=True)", "x"),
    ("x.max()", "x"), ("torch.max(x)", "x"), ("x.max(1)", "x"), ("torch.max(x, 0, keepdim=True)", "x"),
    ("x.max(y)", "x,y"), ("x.min()", "x"), ("torch.min(x)", "x"), ("x.min(dim=1)", "x"),
    ("torch.min(x, 1, True)", "x"), ("torch.min(x, y)", "x,y"),
    ("x.amax()", "x"), ("torch.amax(x, 1)", "x"), ("x.amax((0, 1), keepdim=True)", "x"),
    ("x.amin()", "x"), ("torch.amin(x, -1)", "x"), ("x.aminmax()", ""),
    ("torch.aminmax(x, dim=0)", ""), ("x.argmax()", ""), ("torch.argmax(x, 1)", ""),
    ("x.argmax(dim=0, keepdim=True)", ""), ("x.argmin()", ""), ("torch.argmin(x, dim=1)", ""),
    ("mask.all()", ""), ("torch.all(mask, 1)", ""), ("mask.any()", ""), ("torch.any(mask, 0)", ""),
    ("i.all(dim=1, keepdim=True)", ""), ("i.any(1)", ""),
    ("x.prod()", ""), ("torch.prod(x, 1)", ""), ("i.prod(0)", ""),
    ("x.logsumexp(1)", "x"), ("torch.logsumexp(x, dim=(0, 1))", "x"),
    ("x.count_nonzero()", ""), ("torch.count_nonzero(i, dim=1)", ""),
    ("x.nansum()", "x"), ("torch.nansum(x, 0)", "x"),
    ("x.std()", "x"), ("torch.std(x, 1)", "x"), ("x.std(0, unbiased=False)", "x"),
    ("x.var()", "x"), ("torch.var(x, 1, keepdim=True)", "x"), ("x.var(1, correction=0)", "x"),
    ("x.norm()", "x"), ("torch.norm(x)", "x"), ("x.norm(dim=1)", "x"),
    ("x.dist(y)", "x,y"), ("torch.dist(x, y, 1)", "x,y"),
    ("x.softmax(1)", "x"), ("torch.softmax(x, 0)", "x"), ("x.log_softmax(1)", "x"),
    ("torch.log_softmax(x, -1)", "x"),
    # shapes
    ("x.reshape(4, 3)", "x"), ("torch.reshape(x, (2, -1))", "x"), ("x.view(12)", "x"),
    ("x.view(-1, 2)", "x"), ("x.reshape_as(x.t())", "x"), ("y.view_as(x.t())", "y"),
    ("t3.flatten()", "t3"), ("torch.flatten(t3, 1)", "t3"), ("t3.flatten(0, 1)", "t3"),
    ("t3.ravel()", "t3"), ("torch.ravel(t3)", "t3"),
    ("t3.unflatten(2, (2, 2))", "t3"), ("t3.unflatten(1, (-1, 1))", "t3"),
    ("t3.permute(2, 0, 1)", "t3"), ("torch.permute(t3, (1, 2, 0))", "t3"),
    ("t3.transpose(0, 2)", "t3"), ("torch.transpose(t3, 1, -1)", "t3"),
    ("t3.swapaxes(0, 1)", "t3"), ("torch.swapaxes(t3, 0, 2)", "t3"), ("t3.swapdims(1, 2)", "t3"),
    ("torch.swapdims(t3, 0, 1)", "t3"), ("t3.movedim(0, -1)", "t3"),
    ("torch.movedim(t3, (0, 1), (2, 0))", "t3"), ("t3.moveaxis(2, 0)", "t3"),
    ("torch.moveaxis(t3, -1, 1)", "t3"), ("x.t()", "x"), ("torch.t(x)", "x"), ("x.T", "x"),
    ("x[None].squeeze()", "x"), ("torch.squeeze(x[:, None], 1)", "x"),
    ("x.squeeze(0)", "x"), ("torch.squeeze(x, 1)", "x"), ("torch.squeeze(ba[:, :1], dim=-2)", "ba"),
    ("v[None].squeeze(-1)", "v"), ("x.unsqueeze(0)", "x"),
    ("torch.unsqueeze(x, -1)", "x"), ("v.expand(3, 4)", "v"), ("v.expand(2, 3, -1)", "v"),
    ("v.expand_as(x)", "v"), ("v.broadcast_to((3, 4))", "v"), ("torch.broadcast_to(v, (2, 4))", "v"),
    ("x.repeat(2, 1)", "x"), ("x.repeat(1, 2, 3)", "x"), ("x.tile((2,))", "x"),
    ("torch.tile(x, (2, 1, 1))", "x"), ("x.repeat_interleave(2)", "x"),
    ("torch.repeat_interleave(x, 3, dim=1)", "x"),
    ("x.flip(0)", "x"), ("torch.flip(x, (0, 1))", "x"), ("x.fliplr()", "x"),
    ("torch.fliplr(x)", "x"), ("x.flipud()", "x"), ("torch.flipud(x)", "x"),
    ("x.roll(1)", "x"), ("torch.roll(x, (1, -1), (0, 1))", "x"), ("x.roll(-2, 1)", "x"),
    ("x.narrow(1, 1, 2)", "x"), ("torch.narrow(x, 0, 1, 2)", "x"), ("x.select(1, -1)", "x"),
    ("torch.select(x, 0, 1)", "x"), ("x.index_select(1, idx[0])", "x"),
    ("torch.index_select(x, 0, idx[2, :2])", "x"), ("x.gather(1, idx % 4)", "x"),
    ("torch.gather(x, 0, idx % 3)", "x"), ("x.take_along_dim(idx % 4, 1)", "x"),
    ("torch.take_along_dim(x, idx % 4)", "x"),
    ("x.split(2, 1)", "x"), ("torch.split(x, [1, 2])", "x"), ("x.chunk(2, 1)", "x"),
    ("torch.chunk(x, 3)", "x"), ("x.unbind(1)", "x"), ("torch.unbind(x)", "x"),
    ("sq.tril()", "sq"), ("torch.tril(sq, -1)", "sq"), ("x.triu(1)", "x"), ("torch.triu(x)", "x"),
    ("sq.diagonal()", "sq"), ("torch.diagonal(x, 1)", "x"), ("t3.diagonal(0, 1, 2)", "t3"),
    ("sq.trace()", "sq"), ("torch.trace(x)", "x"), ("v.diag()", "v"), ("torch.diag(v, -1)", "v"),
    ("sq.diag(1)", "sq"),
    # products
    ("x.matmul(m)", "x,m"), ("torch.matmul(x, m)", "x,m"), ("x.mm(m)", "x,m"),
    ("torch.mm(x, m)", "x,m"), ("x.mv(v)", "x,v"), ("torch.mv(x, v)", "x,v"),
    ("ba.bmm(bb)", "ba,bb"), ("torch.bmm(ba, bb)", "ba,bb"), ("v.dot(v * 2)", "v"),
    ("torch.dot(v, v)", "v"), ("v.inner(v)", "v"), ("torch.inner(x, y)", "x,y"),
    ("w.outer(v)", "w,v"), ("torch.outer(w, v)", "w,v"), ("w.ger(v)", "w,v"),
    ("torch.ger(w, v)", "w,v"), ("c.addmm(x, m, beta=0.5, alpha=2)", "c,x,m"),
    ("torch.addmm(c, x, m)", "c,x,m"), ("w.addmv(x, v)", "w,x,v"),
    ("torch.addmv(w, x, v, alpha=0.5)", "w,x,v"), ("x.addr(w, v)", "x,w,v"),
    ("torch.addr(x, w, v, beta=2)", "x,w,v"), ("c[None].baddbmm(ba, bb)", "c,ba,bb"),
    ("torch.baddbmm(c, ba, bb, alpha=3)", "c,ba,bb"), ("c.addbmm(ba, bb)", "c,ba,bb"),
    ("torch.addbmm(c, ba, bb, beta=0)", "ba,bb"),
    # dtypes and conversions
    ("x.float()", ""), ("i.float()", ""), ("x.long()", ""), ("mask.long()", ""),
    ("x.int()", ""), ("i.int()", ""), ("x.bool()", ""), ("i.bool()", ""), ("x.half()", ""),
    ("x.half().float()", ""), ("x.bfloat16().float()", ""), ("i.byte()", ""),
    ("(i + 5).byte()", ""), ("x.to(torch.int64)", ""), ("i.to(torch.float32)", ""),
    ("x.to(dtype=torch.float16)", ""), ("x.type(torch.int32)", ""), ("i.type(torch.float)", ""),
    ("i.type_as(x)", ""), ("x.type_as(i)", ""),
    ("x.is_floating_point()", ""), ("i.is_floating_point()", ""),
    ("torch.is_floating_point(x)", ""), ("mask.is_signed()", ""), ("i.is_signed()", ""),
    ("x.is_same_size(y)", ""), ("x.is_same_size(v)", ""), ("x[0, :1].is_nonzero()", ""),
    ("torch.is_nonzero(x[0, 0])", ""), ("x.numel()", ""), ("torch.numel(t3)", ""),
    ("x.nelement()", ""), ("t3.nelement()", ""), ("x.dim()", ""), ("t3.dim()", ""),
    ("x.ndimension()", ""), ("t3.ndimension()", ""), ("x.ndim", ""), ("t3.ndim", ""),
    ("x.size(1)", ""), ("t3.size(-1)", ""), ("list(x.size())", ""), ("list(t3.shape)", ""),
    ("x.element_size()", ""), ("i.element_size()", ""), ("x[1, 2].item()", ""),
    ("i[0, 0].item()", ""), ("x.tolist()", ""), ("i.tolist()", ""),
    ("x.is_contiguous()", ""), ("x.t().contiguous().is_contiguous()", ""),
    ("x.contiguous()", "x"), ("x.clone()", "x"), ("x.detach()", ""), ("x.cpu()", ""),
    ("x.is_cpu", ""), ("x.is_cuda", ""), ("x.get_device()", ""), ("x.is_leaf", ""),
    ("(x * 2).is_leaf", ""), ("x.requires_grad", ""), ("(x * 2).requires_grad", ""),
    ("x.new_zeros(2, 3)", ""), ("x.new_zeros((4,), dtype=torch.int64)", ""),
    ("x.new_ones(2)", ""), ("i.new_ones((2, 2))", ""), ("x.new_full((2, 3), 7.5)", ""),
    ("i.new_full((2,), 3)", ""), ("x.new_tensor([1, 2])", ""), ("i.new_tensor([[1.5]])", ""),
    ("x.new_empty(2, 3).shape[1]", ""), ("x.new_empty((0,)).numel()", ""),
    ("x.hardshrink(0.7)", "x"), ("torch.hardshrink(x, 0.7)", "x"),
    ("x.prelu(torch.tensor([0.25]))", "x"), ("torch.prelu(x, v.abs())", "x"),
]

# the trigonometric and erf kernels (erfc: 1 - erf; sinc: sin(πx) / (πx) with where at 0)
TRIG = [
    ("x.sin()", "x"), ("torch.sin(x * 5)", "x"), ("x.cos()", "x"), ("torch.cos(x * 5)", "x"),
    ("unit.tan()", "unit"), ("torch.tan(x)", "x"), ("unit.asin()", "unit"),
    ("torch.asin(unit)", "unit"), ("unit.arcsin()", "unit"), ("torch.arcsin(unit)", "unit"),
    ("unit.acos()", "unit"), ("torch.acos(unit)", "unit"), ("unit.arccos()", "unit"),
    ("torch.arccos(unit)", "unit"), ("x.atan()", "x"), ("torch.atan(x * 4)", "x"),
    ("x.arctan()", "x"), ("torch.arctan(x)", "x"), ("x.atan2(y)", "x,y"),
    ("torch.atan2(x, y)", "x,y"), ("x.arctan2(y)", "x,y"), ("torch.arctan2(y, x)", "x,y"),
    ("torch.atan2(x, x * 0)", ""), ("x.sinc()", "x"), ("torch.sinc(x * mask)", ""),
    ("x.erf()", "x"), ("torch.erf(x)", "x"), ("x.erfc()", "x"), ("torch.erfc(x)", "x"),
    ("x.clone().sin_()", ""), ("torch.sin_(y.clone())", ""), ("x.clone().cos_()", ""),
    ("torch.cos_(y.clone())", ""), ("unit.clone().tan_()", ""), ("torch.tan_(unit.clone())", ""),
    ("unit.clone().asin_()", ""), ("torch.asin_(unit * 0.5)", ""), ("unit.clone().arcsin_()", ""),
    ("torch.arcsin_(unit * 0.5)", ""), ("unit.clone().acos_()", ""), ("torch.acos_(unit * 0.5)", ""),
    ("unit.clone().arccos_()", ""), ("torch.arccos_(unit * 0.5)", ""), ("x.clone().atan_()", ""),
    ("torch.atan_(y.clone())", ""), ("x.clone().arctan_()", ""), ("torch.arctan_(y.clone())", ""),
    ("x.clone().atan2_(y)", ""), ("y.clone().atan2_(x)", ""), ("x.clone().arctan2_(y)", ""),
    ("y.clone().arctan2_(x)", ""), ("x.clone().sinc_()", ""), ("torch.sinc_(y.clone())", ""),
    ("x.clone().erf_()", ""), ("torch.erf_(y.clone())", ""), ("x.clone().erfc_()", ""),
    ("torch.erfc_(y.clone())", ""),
    ("x.clone().absolute_().sum()", ""), ("y.clone().sign_().sum()", ""), ("(x * mask).sgn_()", ""),
]

# the sort kernel (_torch_sort.py; more in test_sort_kernel.py)
SORTING = [
    ("x.sort()", "x"), ("torch.sort(x, 0)", "x"), ("x.sort(dim=1, descending=True)", "x"),
    ("torch.sort(i, stable=True)", ""), ("torch.sort(mask.int(), dim=1, stable=True)", ""),
    ("x.argsort()", ""), ("torch.argsort(x, 0, descending=True)", ""),
    ("torch.argsort(j, stable=True)", ""), ("t3.msort()", "t3"), ("torch.msort(x)", "x"),
    ("x.topk(2)", "x"), ("torch.topk(x, 3, dim=0)", "x"), ("x.topk(1, largest=False)", "x"),
    ("torch.topk(i, 2, 1)", ""), ("x.kthvalue(2)", "x"), ("torch.kthvalue(x, 1, 0, True)", "x"),
    ("x.median()", "x"), ("torch.median(x)", "x"), ("x.median(1)", "x"),
    ("torch.median(x, dim=0, keepdim=True)", "x"), ("i.median()", ""),
    ("x.quantile(0.3)", "x"), ("torch.quantile(x, 0.75, dim=1)", "x"),
    ("x.quantile(torch.tensor([0.1, 0.5, 0.9]), 0, keepdim=True)", "x"),
    ("torch.quantile(x, torch.tensor([0.25, 1.0]))", "x"),
]

# in place: on a clone, so the input stays for the next case and the result is compared
IN_PLACE = [
    "abs_", "neg_", "negative_", "exp_", "sigmoid_", "tanh_", "relu_", "square_", "sinh_",
    "cosh_", "asinh_", "arcsinh_", "trunc_", "fix_", "floor_", "ceil_", "round_", "frac_",
    "exp2_", "expm1_", "deg2rad_", "rad2deg_", "sign_", "sgn_", "absolute_", "zero_",
]
IN_PLACE_EXPRESSIONS = [f"x.clone().{name}()" for name in IN_PLACE] + [
    "pos.clone().log_()", "pos.clone().log2_()", "pos.clone().log10_()", "pos.clone().log1p_()",
    "pos.clone().sqrt_()", "pos.clone().rsqrt_()", "pos.clone().reciprocal_()",
    "big.clone().acosh_()", "big.clone().arccosh_()", "unit.clone().atanh_()",
    "unit.clone().arctanh_()", "(unit * 0.5 + 0.5).logit_()",
    "x.clone().add_(y)", "x.clone().add_(y, alpha=2)", "x.clone().sub_(y)",
    "x.clone().subtract_(y)", "x.clone().mul_(y)", "x.clone().multiply_(2)", "x.clone().div_(y)",
    "x.clone().divide_(y)", "x.clone().true_divide_(y)", "pos.clone().pow_(2)",
    "x.clone().fmod_(1.5)", "x.clone().remainder_(y)", "x.clone().floor_divide_(y)",
    "x.clone().hypot_(y)", "x.clone().xlogy_(pos)", "x.clone().lerp_(y, 0.5)",
    "x.clone().addcmul_(y, pos)", "x.clone().addcdiv_(y, pos)", "x.clone().clamp_(-1, 1)",
    "x.clone().clip_(0, 1)", "x.clone().clamp_min_(0)", "x.clone().clamp_max_(0)",
    "x.clone().masked_fill_(mask, 3.0)", "sq.clone().tril_()", "sq.clone().triu_(1)",
    "c.clone().addmm_(x, m)", "w.clone().addmv_(x, v)", "x.clone().addr_(w, v)",
    "torch.zeros(2, 3, 5).baddbmm_(ba, bb)", "c.clone().addbmm_(ba, bb)", "x.clone().fill_(2.5)",
    "x.clone().copy_(y)", "x.clone().eq_(y)", "x.clone().ne_(y)", "x.clone().lt_(y)",
    "x.clone().le_(y)", "x.clone().gt_(y)", "x.clone().ge_(y)", "x.clone().greater_(y)",
    "x.clone().greater_equal_(y)", "x.clone().less_(y)", "x.clone().less_equal_(y)",
    "x.clone().not_equal_(y)", "mask.clone().logical_and_(mask)", "mask.clone().logical_or_(mask)",
    "mask.clone().logical_not_()", "mask.clone().logical_xor_(mask)",
    # the second input for each in-place form
    "y.clone().abs_()", "y.clone().neg_()", "y.clone().negative_()", "y.clone().exp_()",
    "y.clone().sigmoid_()", "y.clone().tanh_()", "y.clone().relu_()", "y.clone().square_()",
    "y.clone().sinh_()", "y.clone().cosh_()", "y.clone().asinh_()", "y.clone().arcsinh_()",
    "y.clone().trunc_()", "y.clone().fix_()", "y.clone().floor_()", "y.clone().ceil_()",
    "halves.clone().round_()", "y.clone().frac_()", "y.clone().exp2_()", "y.clone().expm1_()",
    "y.clone().deg2rad_()", "y.clone().rad2deg_()", "y.clone().sign_()", "y.clone().sgn_()",
    "y.clone().absolute_()", "y.clone().zero_()", "big.clone().log_()", "big.clone().log2_()",
    "big.clone().log10_()", "big.clone().log1p_()", "big.clone().sqrt_()",
    "big.clone().rsqrt_()", "big.clone().reciprocal_()", "(big + 1).acosh_()",
    "(big + 1).arccosh_()", "(unit / 2).atanh_()", "(unit / 2).arctanh_()",
    "(unit * 0.4 + 0.5).logit_(0.2)", "y.clone().mul_(x)", "y.clone().multiply_(x)",
    "y.clone().div_(2)", "y.clone().divide_(x, rounding_mode='floor')", "y.clone().true_divide_(2)",
    "big.clone().pow_(y)", "y.clone().sub_(x, alpha=2)", "y.clone().subtract_(1.5)",
    "y.clone().fmod_(x)", "y.clone().remainder_(1.5)", "y.clone().floor_divide_(0.7)",
    "y.clone().hypot_(x)", "y.clone().xlogy_(big)", "y.clone().lerp_(x, pos)",
    "y.clone().addcmul_(x, pos, value=2)", "y.clone().addcdiv_(x, pos, value=-1)",
    "y.clone().clamp_(min=0)", "y.clone().clip_(max=0)", "y.clone().clamp_min_(0.5)",
    "y.clone().clamp_max_(-0.5)", "y.clone().masked_fill_(mask, -3)", "x.clone().tril_(1)",
    "x.clone().triu_()", "c.clone().addmm_(x, m, beta=2, alpha=0.5)",
    "w.clone().addmv_(x, v, alpha=2)", "x.clone().addr_(w, v, beta=0.5)",
    "torch.ones(2, 3, 5).baddbmm_(ba, bb, alpha=2)", "c.clone().addbmm_(ba, bb, beta=0.5)",
    "y.clone().fill_(-1)", "y.clone().copy_(x)", "i.clone().eq_(j)", "i.clone().ne_(j)",
    "i.clone().lt_(j)", "i.clone().le_(j)", "i.clone().gt_(j)", "i.clone().ge_(j)",
    "y.clone().greater_(0)", "y.clone().greater_equal_(0)", "y.clone().less_(0)",
    "y.clone().less_equal_(0)", "y.clone().not_equal_(x)", "i.clone().logical_and_(j)",
    "i.clone().logical_or_(mask)", "i.clone().logical_not_()", "i.clone().logical_xor_(j)",
    "y.clone().add_(x)", "x.clone().bfloat16().float()", "(x * 2).cpu()", "(x * 2).detach()",
    "x.data", "(x + 1).data", "y.expand_as(x.unsqueeze(0))", "v.reshape_as(w[:2, None].expand(2, 2))",
    "x.view_as(y.t())", "v.get_device()", "v.is_cpu", "v.is_cuda",
    "torch.add(x, y, out=torch.zeros(3, 4))", "torch.sub(x, 1.0, alpha=2, out=x.clone())",
]


CASES = (torch_reference.cases("e", EXPRESSIONS, INPUTS)
         + torch_reference.cases("p", [(e, "") for e in IN_PLACE_EXPRESSIONS], INPUTS)
         + torch_reference.cases("trig", TRIG, INPUTS, atol=2e-6)
         + torch_reference.cases("sort", SORTING, INPUTS))
torch_results, test_matches_pytorch = torch_reference.comparison_tests(CASES)


def test_in_place_methods_return_their_tensor_and_refuse_graph_leaves():
    x = torch.tensor(INPUTS["x"])
    assert x.floor_() is x and x.clamp_min_(0.0) is x and x.eq_(x) is x
    leaf = torch.tensor(INPUTS["x"], requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        leaf.sinh_()


@pytest.mark.parametrize("call, error", [
    (lambda x: x.div(x, rounding_mode="round"), "rounding_mode"),
    (lambda x: x.narrow(1, 3, 2), "exceeds dimension size"),
    (lambda x: x.select(0, 3), "out of range"),
    (lambda x: x.unflatten(1, (3, 2)), "don't multiply up"),
    (lambda x: x.masked_fill(x > 0, torch.ones(2)), "0-dimensional"),
    (lambda x: x.masked_fill(x, 1.0), "boolean masks"),
    (lambda x: x.trace() if x.ndim != 2 else x[0].trace(), "expected a matrix"),
    (lambda x: torch.movedim(x, (0, 1), 0), "same number of dims"),
    (lambda x: x.squeeze(2), r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
])
def test_bad_arguments_name_what_is_wrong(call, error):
    with pytest.raises((RuntimeError, ValueError, IndexError), match=error):
        call(torch.tensor(INPUTS["x"]))


def test_integer_tensors_of_one_element_index_as_pytorchs():
    """``names[logits.argmax()]``: a tensor with one integer (or bool) element is a Python index
    (``operator.index``), any other is torch's TypeError."""
    snippet = """
import operator
names = ['a', 'b', 'c', 'd']
cases = [torch.tensor([0.5, 3.0, 1.0]).argmax(), torch.tensor([2]), torch.tensor([[3]], dtype=torch.int32),
         torch.tensor(1, dtype=torch.uint8), torch.tensor(True), torch.tensor(2.0), torch.tensor([1, 2])]
for k, t in enumerate(cases):
    try:
        out[str(k)] = [operator.index(t), names[t], list(range(t))]
    except TypeError as e:
        out[str(k)] = type(e).__name__
"""
    expected = torch_reference.run(snippet)
    import operator
    names = ["a", "b", "c", "d"]
    cases = [torch.tensor([0.5, 3.0, 1.0]).argmax(), torch.tensor([2]),
             torch.tensor([[3]], dtype=torch.int32), torch.tensor(1, dtype=torch.uint8),
             torch.tensor(True), torch.tensor(2.0), torch.tensor([1, 2])]
    for k, t in enumerate(cases):
        expect = expected[str(k)]
        if expect == "TypeError":
            with pytest.raises(TypeError, match="only integer tensors of a single element"):
                operator.index(t)
        else:
            assert [operator.index(t), names[t], list(range(t))] == expect, k


def test_reshaping_in_place_methods_change_the_tensor_itself_as_pytorchs():
    """``batch.unsqueeze_(0)``, ``t_()``, ``transpose_``...: the same tensor object takes the new
    shape over the same memory (a view taken before sees later writes); a leaf that requires
    grad is refused while recording, and under no_grad stays a leaf that requires grad."""
    snippet = """
x = torch.tensor(x)
before = x[0]
shapes = [list(x.unsqueeze_(0).shape)]
results = [x.squeeze_(0), x.t_(), x.transpose_(0, 1), x.swapdims_(0, 1), x.swapaxes_(1, 0),
           x.unsqueeze_(-1), x.squeeze_()]
shapes += [list(r.shape) for r in results]
out['same object'] = all(r is x for r in results)
x.mul_(2)
out['view sees write'] = before.numpy()
out['shapes'] = shapes
out['values'] = x.numpy()
leaf = torch.ones(2, 3, requires_grad=True)
try:
    leaf.unsqueeze_(0)
except RuntimeError as e:
    out['leaf error'] = type(e).__name__
with torch.no_grad():
    leaf.t_()
out['leaf after'] = [list(leaf.shape), leaf.is_leaf, leaf.requires_grad]
"""
    expected = torch_reference.run(snippet, x=INPUTS["x"])
    x = torch.tensor(INPUTS["x"])
    before = x[0]
    shapes = [list(x.unsqueeze_(0).shape)]
    results = [x.squeeze_(0), x.t_(), x.transpose_(0, 1), x.swapdims_(0, 1), x.swapaxes_(1, 0),
               x.unsqueeze_(-1), x.squeeze_()]
    shapes += [list(r.shape) for r in results]
    assert all(r is x for r in results) == expected["same object"]
    x.mul_(2)
    np.testing.assert_allclose(before.numpy(), expected["view sees write"], rtol=1e-6)
    assert shapes == expected["shapes"]
    np.testing.assert_allclose(x.numpy(), expected["values"], rtol=1e-6)
    leaf = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.unsqueeze_(0)
    assert expected["leaf error"] == "RuntimeError"
    with torch.no_grad():
        leaf.t_()
    assert [list(leaf.shape), leaf.is_leaf, leaf.requires_grad] == expected["leaf after"]


def test_zero_dim_integer_tensors_index_as_their_ints():
    """``transitions[tags[i + 1], tags[i]]``: a 0-d integer tensor inside an index reads and
    writes as its int (a bool or float one does not)."""
    snippet = """
grid = torch.arange(12.0).reshape(3, 4)
tags = torch.tensor([2, 0, 3])
for k, value in enumerate([grid[tags[0], tags[1]], grid[tags[1]], grid[:, tags[2]],
                           grid[tags[0], -1]]):
    out['read%d' % k] = value.numpy().copy()
grid[tags[1], tags[2]] = -5.0
out['written'] = grid.numpy()
try:
    grid[torch.tensor(1.0)]
except Exception as e:
    out['float'] = type(e).__name__
"""
    expected = torch_reference.run(snippet)
    grid = torch.arange(12.0).reshape(3, 4)
    tags = torch.tensor([2, 0, 3])
    read = [grid[tags[0], tags[1]], grid[tags[1]], grid[:, tags[2]], grid[tags[0], -1]]
    for k, ours in enumerate(read):
        np.testing.assert_array_equal(ours.numpy(), expected[f"read{k}"])
    grid[tags[1], tags[2]] = -5.0
    np.testing.assert_array_equal(grid.numpy(), expected["written"])
    assert expected["float"] == "IndexError"
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        grid[torch.tensor(1.0)]


def test_nan_to_num_matches_pytorch_in_each_float_dtype_and_in_place():
    values = np.array([1.5, np.nan, np.inf, -np.inf, -0.25])
    ref = torch_reference.run(
        "for name in ('float32', 'float64'):\n"
        "    t = torch.tensor(v, dtype=getattr(torch, name))\n"
        "    out[name] = torch.nan_to_num(t).numpy()\n"
        "    out[name + ' args'] = t.nan_to_num(nan=2.0, posinf=7.0, neginf=-7.0).numpy()\n"
        "    t.nan_to_num_(nan=-1.0)\n"
        "    out[name + ' in place'] = t.numpy()", v=values)
    for name in ("float32", "float64"):
        t = torch.tensor(values, dtype=getattr(torch, name))
        np.testing.assert_array_equal(torch.nan_to_num(t).numpy(), ref[name])
        np.testing.assert_array_equal(t.nan_to_num(nan=2.0, posinf=7.0, neginf=-7.0).numpy(),
                                      ref[name + " args"])
        t.nan_to_num_(nan=-1.0)
        np.testing.assert_array_equal(t.numpy(), ref[name + " in place"])
