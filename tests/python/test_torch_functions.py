"""Top-level functions of ``import gpuaccel.torch as torch`` that are no Tensor method (joins,
creation, geometry, statistics, index helpers, dtype queries, the torch.nn.functional names torch
repeats at its top level, the in-place and ``*_copy`` function forms) against PyTorch 1.13
(torch_reference): each expression runs with gpuaccel's face as ``torch`` and with the real one,
and outputs (dtype, shape, values) and, for the differentiable ones, gradients are compared."""
import re

import numpy as np
import pytest

import gpuaccel.torch as torch
import torch_reference
from test_torch_tensor_methods import INPUTS

EXPRESSIONS = [
    # joins and splits
    ("torch.cat([x, y])", "x,y"), ("torch.cat((x, y), dim=1)", "x,y"),
    ("torch.concatenate([x, y], 1)", "x,y"), ("torch.concat([x, y], -1)", "x,y"),
    ("torch.stack([x, y])", "x,y"), ("torch.stack((x, y), dim=2)", "x,y"),
    ("torch.hstack([x, y])", "x,y"), ("torch.hstack((v, v))", "v"),
    ("torch.vstack([x, y])", "x,y"), ("torch.vstack((v, v))", "v"),
    ("torch.row_stack([x, v])", "x,v"), ("torch.row_stack((v, v))", "v"),
    ("torch.dstack([x, y])", "x,y"), ("torch.dstack((v, v))", "v"),
    ("torch.column_stack([x, y])", "x,y"), ("torch.column_stack((w, x))", "w,x"),
    ("torch.atleast_1d(x[0, 0])", "x"), ("torch.atleast_1d(v)", "v"),
    ("torch.atleast_2d(v)", "v"), ("torch.atleast_2d(x[0, 0])", "x"),
    ("torch.atleast_3d(x)", "x"), ("torch.atleast_3d(v)", "v"),
    ("torch.block_diag(x, sq)", "x,sq"), ("torch.block_diag(v, w[:2, None])", "v,w"),
    ("torch.cartesian_prod(v, w)", "v,w"), ("torch.cartesian_prod(w[:2], v[:3], v[1:])", ""),
    ("torch.meshgrid(v, w, indexing='ij')", "v,w"), ("torch.meshgrid(v, w, indexing='xy')", "v,w"),
    ("torch.broadcast_tensors(v, w[:, None])", "v,w"), ("torch.broadcast_tensors(x, v)", "x,v"),
    ("list(torch.broadcast_shapes((3, 1), (4,)))", ""),
    ("list(torch.broadcast_shapes((2, 1, 4), (3, 1)))", ""),
    ("torch.tensor_split(x, 3, dim=1)", "x"), ("x.tensor_split([1, 3], 1)", "x"),
    ("torch.hsplit(x, 2)", "x"), ("x.hsplit([1])", "x"), ("torch.vsplit(x, [1, 2])", "x"),
    ("sq.vsplit(2)", "sq"), ("torch.dsplit(ba, 2)", "ba"), ("t3.dsplit([1, 3])", "t3"),
    ("torch.split_with_sizes(x, [2, 1])", "x"), ("x.split_with_sizes([1, 3], 1)", "x"),
    ("torch.unsafe_chunk(x, 2, 1)", "x"), ("x.unsafe_chunk(3)", "x"),
    ("torch.unsafe_split(x, 2)", "x"), ("x.unsafe_split(3, 1)", "x"),
    ("x.unsafe_split_with_sizes([1, 2])", "x"), ("x.unsafe_split_with_sizes([2, 2], 1)", "x"),
    # geometry and products
    ("torch.cdist(x, y)", "x,y"), ("torch.cdist(ba, ba, p=1)", "ba"),
    ("torch.pdist(x)", "x"), ("torch.pdist(c, p=1)", "c"),
    ("torch.kron(x, w[:2, None])", "x,w"), ("v.kron(w)", "v,w"),
    ("torch.cross(t3[:, :, :3], ba[:, :, 1:], dim=2)", "t3,ba"), ("x[:, :3].cross(y[:, :3])", "x,y"),
    ("torch.einsum('ij,jk->ik', x, m)", "x,m"), ("torch.einsum('bij,bjk->bik', ba, bb)", "ba,bb"),
    ("torch.tensordot(x, m, dims=1)", "x,m"), ("torch.tensordot(ba, ba, dims=([1, 2], [1, 2]))", "ba"),
    ("torch.chain_matmul(x, m, m.t())", "x,m"), ("torch.chain_matmul(sq, sq)", "sq"),
    ("torch.matrix_power(sq, 3)", "sq"), ("sq.matrix_power(0)", ""),
    ("torch.vdot(v, v * 2)", "v"), ("v.vdot(v)", "v"),
    ("torch.adjoint(ba)", "ba"), ("x.adjoint()", "x"), ("x.mT", "x"), ("ba.mT", "ba"),
    ("x.mH", "x"), ("ba.mH", "ba"), ("x.H", "x"), ("sq.H", "sq"),
    ("torch.rsub(x, y)", "x,y"), ("torch.rsub(x, 2.0, alpha=3)", "x"),
    # statistics, cumulative ops
    ("torch.std_mean(x)", "x"), ("torch.std_mean(x, 1, keepdim=True)", "x"),
    ("torch.var_mean(x)", "x"), ("torch.var_mean(x, 0, unbiased=False)", "x"),
    ("torch.cov(x)", "x"), ("c.cov(correction=0)", "c"), ("torch.corrcoef(x)", "x"),
    ("c.corrcoef()", "c"), ("torch.nanmean(x)", "x"), ("(x / i).nanmean(1)", ""),
    ("torch.cumsum(x, 1)", "x"), ("x.cumsum(0)", "x"), ("i.cumsum(1)", ""),
    ("torch.diff(x)", "x"), ("x.diff(n=2, dim=0, append=y)", "x,y"),
    ("torch.rot90(x)", "x"), ("x.rot90(2)", "x"), ("t3.rot90(3, (1, 2))", "t3"),
    ("torch.trapezoid(x)", "x"), ("torch.trapezoid(x, dx=0.5, dim=0)", "x"),
    ("torch.trapz(x, v)", "x"), ("torch.trapz(y, dim=0)", "y"),
    ("torch.diag_embed(x)", "x"), ("x.diag_embed(1)", "x"), ("torch.diagflat(x)", "x"),
    ("v.diagflat(-1)", "v"),
    # index helpers (host-computed, int64)
    ("torch.nonzero(i)", ""), ("torch.nonzero(mask, as_tuple=True)", ""), ("i.nonzero()", ""),
    ("torch.argwhere(mask)", ""), ("i.argwhere()", ""),
    ("torch.tril_indices(3, 4)", ""), ("torch.tril_indices(4, 4, -1)", ""),
    ("torch.triu_indices(3, 4)", ""), ("torch.triu_indices(4, 3, 1)", ""),
    # creation
    ("torch.zeros(2, 3)", ""), ("torch.zeros((2,), dtype=torch.int64)", ""),
    ("torch.ones(3)", ""), ("torch.ones(2, 2, dtype=torch.uint8)", ""),
    ("torch.full((2, 3), 1.5)", ""), ("torch.full((2,), 7)", ""),
    ("torch.full_like(x, 2.0)", ""), ("torch.full_like(i, 3)", ""),
    ("torch.zeros_like(x)", ""), ("torch.zeros_like(i)", ""), ("torch.ones_like(mask)", ""),
    ("torch.ones_like(x, dtype=torch.float16)", ""),
    ("torch.arange(5)", ""), ("torch.arange(1, 4, 0.5)", ""), ("torch.arange(0, 10, 3)", ""),
    ("torch.linspace(0, 1, 5)", ""), ("torch.linspace(-2, 2, steps=7)", ""),
    ("torch.logspace(0, 2, 3)", ""), ("torch.logspace(-1, 1, 5, base=2.0)", ""),
    ("torch.eye(3)", ""), ("torch.eye(2, 4)", ""),
    ("torch.tensor([[1, 2], [3, 4]])", ""), ("torch.tensor([1.5, 2.5])", ""),
    ("torch.tensor(True)", ""), ("torch.as_tensor([1, 2, 3])", ""),
    ("torch.as_tensor(x, dtype=torch.int32)", ""), ("torch.asarray([1.5, 2.0])", ""),
    ("torch.asarray(i)", ""), ("torch.scalar_tensor(3)", ""), ("torch.scalar_tensor(2.5)", ""),
    ("torch.from_numpy(np.arange(4.0, dtype=np.float32))", ""),
    ("torch.from_numpy(np.arange(3))", ""),
    ("list(torch.empty(2, 3).shape)", ""), ("list(torch.empty((4,)).shape)", ""),
    ("list(torch.empty_like(x).shape)", ""), ("torch.empty_like(i).dtype == torch.int64", ""),
    ("list(torch.rand(2, 3).shape)", ""), ("torch.rand(4).dtype == torch.float32", ""),
    ("list(torch.rand_like(x).shape)", ""), ("torch.rand_like(x).dtype == torch.float32", ""),
    ("list(torch.randn(3, 2).shape)", ""), ("torch.randn(2).dtype == torch.float32", ""),
    ("list(torch.randn_like(x).shape)", ""), ("torch.randn_like(x).dtype == torch.float32", ""),
    ("list(torch.randint(0, 5, (3, 2)).shape)", ""),
    ("torch.randint(3, (4,)).dtype == torch.int64", ""),
    ("list(torch.randint_like(x, 5).shape)", ""),
    ("bool((torch.randint_like(x, 2, 5) >= 2).all())", ""),
    ("bool((torch.rand(100) < 1).all())", ""), ("bool((torch.randint(0, 3, (50,)) < 3).all())", ""),
    # dtypes and queries
    ("torch.zeros(2, dtype=torch.float16)", ""), ("x.to(torch.float16)", ""),
    ("torch.ones(2, dtype=torch.bfloat16).float()", ""), ("x.to(torch.bfloat16).float()", ""),
    ("torch.zeros(2, dtype=torch.uint8)", ""), ("i.abs().to(torch.uint8)", ""),
    ("torch.promote_types(torch.int32, torch.float32) == torch.float32", ""),
    ("torch.promote_types(torch.uint8, torch.int64) == torch.int64", ""),
    ("torch.result_type(i, 2.5) == torch.float32", ""),
    ("torch.result_type(i, j) == torch.int64", ""),
    ("torch.get_default_dtype() == torch.float32", ""),
    ("torch.get_default_dtype() == torch.float", ""),
    ("torch.is_same_size(x, y)", ""), ("torch.is_same_size(x, v)", ""),
    ("torch.is_signed(i)", ""), ("torch.is_signed(mask)", ""),
    ("torch.is_tensor(x)", ""), ("torch.is_tensor([1])", ""), ("~mask", ""), ("mask & (x > 0)", ""),
    ("mask | (x > 0)", ""), ("mask ^ (x > 0)", ""),
    ("torch.is_conj(x)", ""), ("x.is_conj()", ""), ("torch.is_neg(x)", ""), ("x.is_neg()", ""),
    ("torch.resolve_conj(x)", ""), ("x.resolve_conj()", ""), ("torch.resolve_neg(x)", ""),
    ("x.resolve_neg()", ""), ("x.is_inference()", ""), ("(x * 2).is_inference()", ""),
    ("torch.is_grad_enabled()", ""), ("bool(torch.is_grad_enabled())", ""),
    ("torch.e", ""), ("torch.pi", ""), ("torch.inf", ""), ("-torch.inf", ""),
    ("torch.isnan(torch.tensor(torch.nan))", ""), ("torch.tensor([torch.nan]).isnan()", ""),
    ("torch.get_device(x)", ""), ("torch.numel(x)", ""),
    # torch.nn.functional's names at the top level
    ("torch.conv2d(img, kern, None, 1, 1)", "img,kern"), ("torch.conv2d(img, kern)", "img,kern"),
    ("torch.conv1d(t3, kern1d)", "t3,kern1d"), ("torch.conv1d(t3, kern1d, padding=1)", "t3"),
    ("torch.max_pool2d(img, 2)", "img"), ("torch.max_pool2d(img, 3, 1, 1)", "img"),
    ("torch.max_pool1d(t3, 2)", "t3"), ("torch.max_pool1d(t3, 3, 1)", "t3"),
    ("torch.avg_pool1d(t3, 2)", "t3"), ("torch.avg_pool1d(t3, 3, 1, 1)", "t3"),
    ("torch.adaptive_avg_pool1d(t3, 3)", "t3"), ("torch.adaptive_avg_pool1d(t3, 1)", "t3"),
    ("torch.pixel_shuffle(img4, 2)", "img4"), ("torch.pixel_shuffle(img4, 1)", "img4"),
    ("torch.pixel_unshuffle(img, 2)", "img"), ("torch.pixel_unshuffle(img, 1)", "img"),
    ("torch.channel_shuffle(img4, 2)", ""), ("torch.channel_shuffle(img4, 4)", ""),
    ("torch.layer_norm(x, (4,))", "x"), ("torch.layer_norm(x, [4], v, v)", "x,v"),
    ("torch.group_norm(img4, 2)", "img4"), ("torch.group_norm(img4, 4, v, v)", "img4,v"),
    ("torch.dropout(x, 0.5, False)", "x"), ("torch.dropout(y, 0.1, train=False)", "y"),
    ("torch.cosine_similarity(x, y)", "x,y"), ("torch.cosine_similarity(x, y, 0)", "x,y"),
    ("torch.pairwise_distance(x, y)", "x,y"), ("torch.pairwise_distance(x, y, 1.0)", "x,y"),
    ("torch.bilinear(x, y, bil, None)", "x,y,bil"), ("torch.bilinear(y, x, bil, w[:2])", "x,y"),
    ("torch.prelu(img4, v)", "img4,v"), ("torch.prelu(x, v[:1])", "x"),
    ("torch.hardshrink(x, 0.5)", "x"), ("torch.hardshrink(y)", "y"),
    ("torch.threshold(x, 0.1, 2.0)", "x"), ("torch.threshold(y, -0.1, 0.0)", "y"),
    ("torch.threshold_(x.clone(), 0.1, 2.0)", ""), ("torch.threshold_(y.clone(), 0.0, 1.0)", ""),
    ("torch.selu(x)", "x"), ("torch.selu(y * 2)", "y"), ("torch.selu_(x.clone())", ""),
    ("torch.selu_(y.clone())", ""), ("torch.celu(x)", "x"), ("torch.celu(y, 0.5)", "y"),
    ("torch.celu_(x.clone())", ""), ("torch.celu_(y.clone(), 2.0)", ""),
    ("torch.relu_(x.clone())", ""), ("torch.relu_(y.clone())", ""),
    # in-place and copy function forms
    ("torch.abs_(x.clone())", ""), ("torch.abs_(y.clone())", ""),
    ("torch.neg_(x.clone())", ""), ("torch.neg_(y.clone())", ""),
    ("torch.negative_(x.clone())", ""), ("torch.negative_(y.clone())", ""),
    ("torch.exp_(x.clone())", ""), ("torch.exp_(y.clone())", ""),
    ("torch.exp2_(x.clone())", ""), ("torch.exp2_(y.clone())", ""),
    ("torch.expm1_(x.clone())", ""), ("torch.expm1_(y.clone())", ""),
    ("torch.log_(pos.clone())", ""), ("torch.log_(big.clone())", ""),
    ("torch.log2_(pos.clone())", ""), ("torch.log2_(big.clone())", ""),
    ("torch.log10_(pos.clone())", ""), ("torch.log10_(big.clone())", ""),
    ("torch.log1p_(pos.clone())", ""), ("torch.log1p_(big.clone())", ""),
    ("torch.sqrt_(pos.clone())", ""), ("torch.sqrt_(big.clone())", ""),
    ("torch.rsqrt_(pos.clone())", ""), ("torch.rsqrt_(big.clone())", ""),
    ("torch.reciprocal_(pos.clone())", ""), ("torch.reciprocal_(big.clone())", ""),
    ("torch.square_(x.clone())", ""), ("torch.square_(y.clone())", ""),
    ("torch.sigmoid_(x.clone())", ""), ("torch.sigmoid_(y.clone())", ""),
    ("torch.tanh_(x.clone())", ""), ("torch.tanh_(y.clone())", ""),
    ("torch.sinh_(x.clone())", ""), ("torch.sinh_(y.clone())", ""),
    ("torch.cosh_(x.clone())", ""), ("torch.cosh_(y.clone())", ""),
    ("torch.asinh_(x.clone())", ""), ("torch.asinh_(y.clone())", ""),
    ("torch.arcsinh_(x.clone())", ""), ("torch.arcsinh_(y.clone())", ""),
    ("torch.acosh_(big.clone())", ""), ("torch.acosh_(big + 1)", ""),
    ("torch.arccosh_(big.clone())", ""), ("torch.arccosh_(big + 1)", ""),
    ("torch.atanh_(unit.clone())", ""), ("torch.atanh_(unit / 2)", ""),
    ("torch.arctanh_(unit.clone())", ""), ("torch.arctanh_(unit / 2)", ""),
    ("torch.floor_(x.clone())", ""), ("torch.floor_(y.clone())", ""),
    ("torch.ceil_(x.clone())", ""), ("torch.ceil_(y.clone())", ""),
    ("torch.trunc_(x.clone())", ""), ("torch.trunc_(y.clone())", ""),
    ("torch.fix_(x.clone())", ""), ("torch.fix_(y.clone())", ""),
    ("torch.frac_(x.clone())", ""), ("torch.frac_(y.clone())", ""),
    ("torch.round_(halves.clone())", ""), ("torch.round_(y.clone())", ""),
    ("torch.deg2rad_(x.clone())", ""), ("torch.deg2rad_(y.clone())", ""),
    ("torch.rad2deg_(x.clone())", ""), ("torch.rad2deg_(y.clone())", ""),
    ("torch.logit_(unit * 0.5 + 0.5)", ""), ("torch.logit_(unit * 0.4 + 0.5, 0.2)", ""),
    ("torch.clamp_(x.clone(), -1, 1)", ""), ("torch.clamp_(y.clone(), min=0)", ""),
    ("torch.clip_(x.clone(), -1, 1)", ""), ("torch.clip_(y.clone(), max=0)", ""),
    ("torch.clamp_min_(x.clone(), 0)", ""), ("torch.clamp_min_(y.clone(), 0.5)", ""),
    ("torch.clamp_max_(x.clone(), 0)", ""), ("torch.clamp_max_(y.clone(), 0.5)", ""),
    ("torch.xlogy_(x.clone(), pos)", ""), ("torch.xlogy_(y.clone(), big)", ""),
    ("torch.addmv_(w.clone(), x, v)", ""), ("torch.addmv_(w.clone(), x, v, alpha=2)", ""),
    ("torch.fill_(x.clone(), 2.0)", ""), ("torch.fill_(i.clone(), 3)", ""),
    ("torch.zero_(x.clone())", ""), ("torch.zero_(i.clone())", ""),
    ("torch.clone(x)", "x"), ("torch.clone(i)", ""), ("torch.detach(x)", ""),
    ("torch.detach(x * 2)", ""),
    ("torch.permute_copy(t3, (2, 0, 1))", "t3"), ("torch.permute_copy(x, [1, 0])", "x"),
    ("torch.transpose_copy(t3, 0, 2)", "t3"), ("torch.transpose_copy(x, 0, 1)", "x"),
    ("torch.t_copy(x)", "x"), ("torch.t_copy(v)", "v"),
    ("torch.squeeze_copy(x[None])", "x"), ("torch.squeeze_copy(x[:, None], 1)", "x"),
    ("torch.unsqueeze_copy(x, 0)", "x"), ("torch.unsqueeze_copy(v, 1)", "v"),
    ("torch.view_copy(x, (4, 3))", "x"), ("torch.view_copy(x, [12])", "x"),
    ("torch.expand_copy(v, (3, 4))", "v"), ("torch.expand_copy(w[:, None], (3, 2))", "w"),
    ("torch.diagonal_copy(sq)", "sq"), ("torch.diagonal_copy(x, 1)", "x"),
    ("torch.select_copy(x, 0, 1)", "x"), ("torch.select_copy(x, 1, -1)", "x"),
    ("torch.detach_copy(x)", ""), ("torch.detach_copy(y)", ""),
    ("torch.unbind_copy(x)", "x"), ("torch.unbind_copy(x, 1)", "x"),
    ("torch.split_copy(x, 2)", "x"), ("torch.split_copy(x, 3, 1)", "x"),
    ("torch.narrow_copy(x, 1, 0, 2)", ""), ("torch.narrow_copy(x, 0, 1, 1)", ""),
    ("torch.split_with_sizes_copy(x, [1, 2])", "x"),
    ("torch.split_with_sizes_copy(x, [3, 1], 1)", "x"),
    ("torch.concatenate((x, y))", "x,y"), ("x * torch.e + torch.pi", "x"),
    # element-wise with a second operand, masks and index tensors (methods and functions)
    ("torch.copysign(x, y)", "x"), ("x.copysign(-1.0)", "x"), ("x.clone().copysign_(y)", ""),
    ("torch.heaviside(x, y)", ""), ("(x * mask).heaviside(torch.tensor(0.5))", ""),
    ("x.clone().heaviside_(y)", ""), ("torch.ldexp(x, j)", "x"), ("x.ldexp(i)", "x"),
    ("x.clone().ldexp_(j)", ""), ("torch.isin(i, j)", ""), ("torch.isin(i, torch.tensor([0, 3]))", ""),
    ("torch.isin(i, j, invert=True)", ""), ("torch.take(x, idx)", "x"),
    ("x.take(torch.tensor([0, 11, 5]))", "x"), ("torch.masked_select(x, mask)", "x"),
    ("x.masked_select(mask[0])", "x"), ("torch.index_fill(x, 1, torch.tensor([0, 2]), -1.0)", "x"),
    ("x.index_fill(0, torch.tensor([1]), 2.5)", "x"), ("x.clone().index_fill_(1, idx[0], 0.0)", ""),
    ("torch.index_add(x, 1, torch.tensor([0, 0, 3]), c[:, :3])", "x,c"),
    ("x.index_add(0, torch.tensor([2, 0]), y[:2], alpha=2)", "x,y"),
    ("x.clone().index_add_(1, torch.tensor([1, 2]), y[:, :2])", ""),
    ("torch.index_copy(x, 1, torch.tensor([3, 0]), c[:, :2])", "x,c"),
    ("x.index_copy(0, torch.tensor([2, 0]), y[:2])", "x,y"),
    ("x.clone().index_copy_(1, torch.tensor([1]), y[:, :1])", ""),
    ("torch.scatter_add(x, 1, idx, y)", "x,y"), ("x.scatter_add(0, idx % 3, y)", "x,y"),
    ("x.clone().scatter_add_(1, idx, y)", ""),
    ("torch.scatter(x, 1, torch.tensor([[0, 1], [2, 3], [1, 0]]), c[:, :2])", "x"),
    ("x.scatter(1, torch.tensor([[3], [0], [2]]), 5.0)", "x"),
    ("x.clone().scatter_(0, torch.tensor([[1, 0, 2, 1]]), y[:1])", ""),
    ("torch.renorm(x, 2, 0, 1.0)", "x"), ("x.renorm(1, 1, 2.0)", "x"),
    ("x.clone().renorm_(2, 1, 1.5)", ""), ("torch.logcumsumexp(x, 1)", "x"),
    ("x.logcumsumexp(0)", "x"), ("x.clone().cumsum_(1)", ""), ("y.clone().cumsum_(0)", ""),
    # combinatorics and creation helpers
    ("torch.combinations(v)", "v"), ("torch.combinations(w, r=3, with_replacement=True)", "w"),
    ("torch.vander(w)", ""), ("torch.vander(v, N=3, increasing=True)", ""),
    ("torch.cumulative_trapezoid(x)", "x"), ("torch.cumulative_trapezoid(x, dx=2.0, dim=0)", "x"),
    ("torch.hann_window(6)", ""), ("torch.hann_window(5, periodic=False)", ""),
    ("torch.hamming_window(6)", ""), ("torch.hamming_window(5, False)", ""),
    ("torch.blackman_window(6)", ""), ("torch.blackman_window(7, periodic=False)", ""),
    ("torch.bartlett_window(6)", ""), ("torch.bartlett_window(5, False)", ""),
    ("torch.kaiser_window(6)", ""), ("torch.kaiser_window(7, False, beta=5.0)", ""),
    ("torch.randperm(6).sum()", ""), ("torch.randperm(4).dtype == torch.int64", ""),
    ("list(torch.bernoulli(unit * 0.5 + 0.5).shape)", ""),
    # every draw is 0 or 1 (one draw, tested twice: two draws would make the answer random)
    ("bool((lambda b: ((b == 0) | (b == 1)).all())(torch.bernoulli(unit * 0 + 0.5)))", ""),
    ("torch.bernoulli(unit * 0 + 1.0)", ""),
    # dtype and mode queries
    ("torch.finfo(torch.float32).eps", ""), ("torch.finfo(torch.float16).max", ""),
    ("torch.finfo(torch.bfloat16).tiny", ""), ("torch.finfo().bits", ""),
    ("torch.iinfo(torch.int32).max", ""), ("torch.iinfo(torch.uint8).min", ""),
    ("torch.iinfo(torch.int64).bits", ""),
    ("torch.can_cast(torch.float32, torch.int32)", ""), ("torch.can_cast(torch.int32, torch.float16)", ""),
    ("torch.can_cast(torch.bool, torch.uint8)", ""), ("torch.typename(x)", ""), ("torch.typename(i)", ""),
    ("list(torch.Size([2, 3]))", ""), ("torch.Size((2, 3)).numel()", ""),
    ("isinstance(torch.float32, torch.dtype)", ""), ("isinstance(x.dtype, torch.dtype)", ""),
    ("torch.is_inference(x)", ""), ("torch.is_inference(x * 2)", ""),
    ("torch.is_inference_mode_enabled()", ""), ("bool(torch.is_inference_mode_enabled())", ""),
    ("torch.are_deterministic_algorithms_enabled()", ""),
    ("bool(torch.are_deterministic_algorithms_enabled())", ""),
    # ATen's forms of F's functions (int reductions, argument orders, statistics returned)
    ("torch.kl_div(x, y.exp(), 2)", "x"), ("torch.kl_div(x, y, 0, log_target=True)", "x,y"),
    ("torch.binary_cross_entropy_with_logits(x, unit * 0.5 + 0.5, None, None, 1)", "x"),
    ("torch.binary_cross_entropy_with_logits(x, mask.float(), None, None, 0)", "x"),
    ("torch.hinge_embedding_loss(x[:, 0], w.sign(), 1.0, 2)", "x"),
    ("torch.hinge_embedding_loss(x[:, 0], w.sign())", "x"),  # reduction: none by default
    ("torch.margin_ranking_loss(x[:, 0], x[:, 1], w.sign(), 0.2, 1)", "x"),
    ("torch.margin_ranking_loss(x[:, 0], y[:, 1], w.sign())", "x,y"),
    ("torch.cosine_embedding_loss(x, y, w.sign(), 0.1, 1)", "x,y"),
    ("torch.cosine_embedding_loss(x, y, w.sign())", "x,y"),
    ("torch.poisson_nll_loss(x, pos, True, False, 1e-8, 1)", "x"),
    ("torch.poisson_nll_loss(pos, pos, False, False, 1e-8, 2)", "pos"),
    ("torch.triplet_margin_loss(x, y, pos, 1.0, 2.0, 1e-6, False, 1)", "x,y,pos"),
    ("torch.triplet_margin_loss(x, y, pos)", "x,y,pos"),
    ("torch.batch_norm(img, None, None, None, None, True, 0.1, 1e-5, False)", "img"),
    ("torch.batch_norm(img, w, w, w, w.abs(), False, 0.1, 1e-5, False)", "img"),
    ("torch.instance_norm(img, None, None, None, None, True, 0.1, 1e-5, False)", "img"),
    ("torch.instance_norm(img, w, w, None, None, True, 0.1, 1e-3, False)", "img,w"),
    ("torch.embedding(m, idx)", "m"), ("torch.embedding(x, torch.tensor([2, 0]))", "x"),
    ("torch.constant_pad_nd(x, (1, 2))", "x"), ("torch.constant_pad_nd(x, [0, 1, 1, 0], 3.0)", "x"),
    ("torch.native_layer_norm(x, [4], None, None, 1e-5)", "x"),
    ("torch.native_layer_norm(ba, (3, 4), t3[0], t3[1], 1e-5)", "ba,t3"),
    ("torch.native_channel_shuffle(img4, 2)", ""), ("torch.native_channel_shuffle(img4, 1)", ""),
    ("torch.native_dropout(x, 0.5, False)", ""), ("torch.native_dropout(y, 0.0, True)", ""),
    ("torch.frobenius_norm(x)", "x"), ("torch.frobenius_norm(x, [1], True)", "x"),
    ("torch.norm_except_dim(x)", "x"), ("torch.norm_except_dim(x, 3, 1)", "x"),
    ("torch.feature_dropout(img, 0.5, False)", "img"), ("torch.feature_dropout(t3, 0.2, False)", "t3"),
    ("torch.feature_dropout_(img.clone(), 0.5, False)", ""),
    ("torch.feature_dropout_(t3.clone(), 0.0, True)", ""),
    ("torch.alpha_dropout(x, 0.5, False)", "x"), ("torch.alpha_dropout(y, 0.0, True)", "y"),
    ("torch.alpha_dropout_(x.clone(), 0.5, False)", ""), ("torch.alpha_dropout_(y.clone(), 0.0, True)", ""),
    ("torch.dropout_(x.clone(), 0.5, False)", ""), ("torch.dropout_(y.clone(), 0.0, True)", ""),
    ("torch.rrelu(x)", "x"), ("torch.rrelu(y, 0.1, 0.2)", "y"), ("torch.rrelu_(x.clone())", ""),
    ("torch.rrelu_(y.clone(), 0.2, 0.4)", ""),
    # windows, strided views, scatters into slices
    ("x.unfold(1, 2, 1)", "x"), ("t3.unfold(2, 3, 1)", "t3"), ("x.unfold(0, 2, 2)", "x"),
    ("torch.unfold_copy(x, 1, 2, 2)", "x"), ("torch.unfold_copy(t3, 1, 3, 1)", "t3"),
    ("torch.as_strided(x, (2, 2), (1, 2))", "x"), ("x.as_strided((3, 3), (4, 1), 1)", "x"),
    ("torch.as_strided_copy(x, (2, 3), (3, 1))", "x"), ("torch.as_strided_copy(v, (2, 2), (1, 1))", "v"),
    ("torch.alias_copy(x)", "x"), ("torch.alias_copy(i)", ""),
    ("torch.select_scatter(x, v, 0, 1)", "x,v"), ("x.select_scatter(w, 1, -1)", "x,w"),
    ("torch.slice_scatter(x, c[:, :2], 1, 0, 4, 2)", "x,c"), ("x.slice_scatter(y[:2], dim=0, start=1, end=3, step=1)", "x,y"),
    ("torch.diagonal_scatter(sq, v)", "sq,v"), ("x.diagonal_scatter(w[:2], 2)", "x,w"),
    # sampled-function gradients, histograms, bucketing, running extremes and products
    ("torch.gradient(x)", "x"), ("torch.gradient(x, spacing=2.0, dim=1)", "x"),
    ("torch.histc(x, 4)", ""), ("x.histc(5, -1, 1)", ""), ("torch.histc(i.float(), bins=3, min=-2, max=2)", ""),
    ("torch.bincount(j.flatten())", ""), ("(i.flatten() + 5).bincount(minlength=12)", ""),
    ("torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]))", ""),
    ("torch.bucketize(i, torch.tensor([-2, 0, 3]), right=True)", ""),
    ("torch.bucketize(x, torch.tensor([0.5]), out_int32=True)", ""),
    ("torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x)", ""),
    ("torch.searchsorted(torch.tensor([[-1.0, 0.0], [0.5, 1.0], [0.0, 2.0]]), x, right=True)", ""),
    ("torch.searchsorted(torch.tensor([-2, 0, 3]), i, side='right')", ""),
    ("torch.cummax(x, 1)", "x"), ("x.cummax(0)", "x"), ("torch.cummin(x, 1)", "x"),
    ("x.cummin(dim=0)", "x"), ("torch.cumprod(x, 1)", "x"), ("x.cumprod(0)", "x"),
    ("i.cumprod(1)", ""), ("(x * mask).cumprod(1)", ""), ("x.clone().cumprod_(1)", ""),
    ("y.clone().cumprod_(0)", ""),
    # queries answered the same way
    ("torch.seed() > 0", ""), ("torch.set_default_dtype(torch.float32)", ""),
    ("torch.set_default_dtype(torch.float) is None", ""),
    ("x.sum_to_size(1, 4)", "x"), ("x.sum_to_size(3, 1)", "x"), ("t3.sum_to_size(3, 1)", "t3"),
    ("x.data_ptr() == x.data_ptr()", ""), ("x.data_ptr() != y.data_ptr()", ""),
    ("x.grad_fn is None", ""), ("x.requires_grad_().mul(2).grad_fn is None", ""),
    ("bool((x.clone().uniform_(2, 3) >= 2).all())", ""), ("list(x.clone().uniform_().shape)", ""),
    ("list(x.clone().normal_().shape)", ""), ("x.clone().normal_(5, 0.1).dtype == torch.float32", ""),
    ("x.clone().absolute_()", ""), ("y.clone().sign_()", ""), ("(x * mask).sgn_()", ""),
    ("x.clone().copysign_(-1.0)", ""), ("x.clone().heaviside_(torch.tensor(0.5))", ""),
    ("x.clone().ldexp_(i)", ""), ("x.clone().index_fill_(0, torch.tensor([2]), 1.0)", ""),
    ("x.clone().index_add_(0, torch.tensor([1]), y[:1], alpha=3)", ""),
    ("x.clone().index_copy_(0, torch.tensor([0, 2]), y[1:])", ""),
    ("x.clone().scatter_add_(0, idx % 3, y)", ""), ("x.clone().scatter_(1, torch.tensor([[2, 0], [1, 3], [0, 1]]), y[:, :2])", ""),
    ("x.clone().renorm_(1, 0, 0.5)", ""),
    # special functions (no kernel: _torch_special.py)
    ("torch.lgamma(pos)", "pos"), ("big.lgamma()", "big"), ("torch.lgamma(unit - 1.5)", "unit"),
    ("pos.clone().lgamma_()", ""), ("torch.digamma(pos)", "pos"), ("big.digamma()", "big"),
    ("torch.digamma(unit - 1.5)", "unit"), ("pos.clone().digamma_()", ""),
    ("torch.mvlgamma(big + 1, 2)", "big"), ("(big + 2).mvlgamma(3)", "big"),
    ("(big + 1).mvlgamma_(2)", ""), ("torch.i0(x)", "x"), ("y.i0()", "y"), ("torch.i0_(x.clone())", ""),
    ("y.clone().i0_()", ""), ("torch.erfinv(unit)", "unit"), ("(unit * 0.999).erfinv()", ""),
    ("unit.clone().erfinv_()", ""), ("torch.frexp(x * 10)", ""), ("(x * i).frexp()", ""),
    # the legacy typed tensors and the generator state
    ("torch.FloatTensor([1, 2])", ""), ("torch.FloatTensor(x)", ""), ("torch.LongTensor([[1, 2]])", ""),
    ("torch.LongTensor(i)", ""), ("torch.IntTensor([3])", ""), ("list(torch.IntTensor(2, 3).shape)", ""),
    ("torch.ByteTensor([1, 255])", ""), ("torch.ByteTensor(3).dtype == torch.uint8", ""), ("torch.BoolTensor([True, False])", ""),
    ("list(torch.BoolTensor(2).shape)", ""), ("torch.HalfTensor([0.5])", ""), ("torch.HalfTensor(x.half())", ""),
    ("torch.BFloat16Tensor([0.5]).float()", ""), ("torch.BFloat16Tensor(x.bfloat16()).float()", ""),
    ("isinstance(x, torch.FloatTensor)", ""), ("isinstance(i, torch.FloatTensor)", ""),
    ("isinstance(i, torch.LongTensor)", ""), ("isinstance(x.int(), torch.IntTensor)", ""),
    ("isinstance(mask, torch.BoolTensor)", ""), ("isinstance(x.half(), torch.HalfTensor)", ""),
    ("isinstance(x.bfloat16(), torch.BFloat16Tensor)", ""), ("isinstance(x.byte(), torch.ByteTensor)", ""),
    ("torch.get_rng_state().dtype == torch.uint8", ""), ("torch.get_rng_state().dim()", ""),
    ("torch.is_distributed(x)", ""), ("torch.is_distributed(i)", ""),
]

EXTRA_INPUTS = {
    "img": np.random.default_rng(30).uniform(-2, 2, (2, 3, 6, 6)).astype(np.float32),
    "img4": np.random.default_rng(31).uniform(-2, 2, (2, 4, 3, 3)).astype(np.float32),
    "kern": np.random.default_rng(32).uniform(-1, 1, (5, 3, 3, 3)).astype(np.float32),
    "kern1d": np.random.default_rng(33).uniform(-1, 1, (2, 3, 3)).astype(np.float32),
    "bil": np.random.default_rng(34).uniform(-1, 1, (2, 4, 4)).astype(np.float32),
}
ALL_INPUTS = {**INPUTS, **EXTRA_INPUTS}


def _needed(expr):
    return {n: a for n, a in ALL_INPUTS.items() if re.search(rf"\b{n}\b", expr)}


CASES = torch_reference.cases("f", EXPRESSIONS, _needed)
torch_results, test_matches_pytorch = torch_reference.comparison_tests(CASES)


def test_random_functions_follow_their_distributions():
    torch.manual_seed(0)
    draws = torch.bernoulli(torch.full((4000,), 0.3)).numpy()
    assert set(np.unique(draws)) == {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.03
    perm = torch.randperm(50).numpy()
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    x = torch.ones(2000)
    kept = torch.alpha_dropout(x, 0.5, True).numpy()
    assert len(np.unique(kept)) == 2  # the kept and the saturated value, both affine-corrected
    slopes = (torch.rrelu(-x, 0.1, 0.3, training=True) / -x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.02
    assert torch.initial_seed() == 0 and torch.seed() == torch.initial_seed()


def test_rng_state_round_trip_repeats_draws_as_pytorch():
    ref = torch_reference.run("""
state = torch.get_rng_state(); a = torch.rand(5)
torch.set_rng_state(state); b = torch.rand(5)
out["same"] = bool((a == b).all())
""")
    state = torch.get_rng_state()
    a = torch.rand(5)
    torch.set_rng_state(state)
    b = torch.rand(5)
    assert bool((a == b).all()) == ref["same"] is True


def test_grad_mode_switches_as_pytorch():
    ref = torch_reference.run("""
x = torch.ones(2, requires_grad=True)
with torch.no_grad():
    out["no_grad"] = [torch.is_grad_enabled(), (x * 2).requires_grad]
    with torch.enable_grad():
        out["enable_grad"] = [torch.is_grad_enabled(), (x * 2).requires_grad]
with torch.set_grad_enabled(False):
    out["set_false"] = [torch.is_grad_enabled(), (x * 2).requires_grad]
with torch.inference_mode():
    out["inference"] = [torch.is_grad_enabled(), (x * 2).requires_grad]
out["after"] = [torch.is_grad_enabled(), (x * 2).requires_grad]
""")
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert [torch.is_grad_enabled(), (x * 2).requires_grad] == ref["no_grad"]
        with torch.enable_grad():
            assert [torch.is_grad_enabled(), (x * 2).requires_grad] == ref["enable_grad"]
    with torch.set_grad_enabled(False):
        assert [torch.is_grad_enabled(), (x * 2).requires_grad] == ref["set_false"]
    with torch.inference_mode():
        assert [torch.is_grad_enabled(), (x * 2).requires_grad] == ref["inference"]
    assert [torch.is_grad_enabled(), (x * 2).requires_grad] == ref["after"]


def test_manual_seed_repeats_draws_as_pytorch():
    ref = torch_reference.run("""
torch.manual_seed(3); a = torch.rand(4)
torch.manual_seed(3); b = torch.rand(4)
out["same"] = bool((a == b).all())
""")
    torch.manual_seed(3)
    a = torch.rand(4)
    torch.manual_seed(3)
    b = torch.rand(4)
    assert bool((a == b).all()) == ref["same"] is True


@pytest.mark.parametrize("call, error", [
    (lambda: torch.meshgrid(torch.ones(2), indexing="yx"), "indexing must be one of"),
    (lambda: torch.hsplit(torch.ones(3, 3), 2), "not divisible"),
    (lambda: torch.cross(torch.ones(2, 4), torch.ones(2, 4), dim=1), "must have length 3"),
    (lambda: torch.hstack(torch.ones(2)), "must be a tuple or list of Tensors"),
    (lambda: torch.FloatTensor(torch.ones(2, dtype=torch.int64)), "expects a float32 tensor"),
])
def test_bad_arguments_name_what_is_wrong(call, error):
    with pytest.raises((RuntimeError, ValueError, TypeError), match=error):
        call()


def test_factories_write_into_out_as_pytorch():
    """``torch.rand(2, 2, out=c)``: each factory fills ``c`` itself and returns it (the same
    object, as in torch), casting to ``c``'s dtype."""
    snippet = """
c = torch.zeros(2, 3)
results = {'zeros': torch.zeros(2, 3, out=c), 'ones': torch.ones(2, 3, out=c)}
out['ones'] = c.numpy().copy()
results['full'] = torch.full((2, 3), 2.5, out=c)
out['full'] = c.numpy().copy()
results['empty'] = torch.empty(2, 3, out=c)
results['rand'] = torch.rand(2, 3, out=c)
out['rand in [0, 1)'] = bool(((c >= 0) & (c < 1)).all())
results['randn'] = torch.randn(2, 3, out=c)
out['same object'] = {k: v is c for k, v in results.items()}
i = torch.zeros(2, dtype=torch.int64)
torch.full((2,), 7, out=i)
out['int'] = [str(i.dtype), i.tolist()]
"""
    expected = torch_reference.run(snippet)
    c = torch.zeros(2, 3)
    results = {"zeros": torch.zeros(2, 3, out=c), "ones": torch.ones(2, 3, out=c)}
    np.testing.assert_array_equal(c.numpy(), expected["ones"])
    results["full"] = torch.full((2, 3), 2.5, out=c)
    np.testing.assert_array_equal(c.numpy(), expected["full"])
    results["empty"] = torch.empty(2, 3, out=c)
    results["rand"] = torch.rand(2, 3, out=c)
    assert bool(((c >= 0) & (c < 1)).all()) == expected["rand in [0, 1)"]
    before = c.numpy().copy()
    results["randn"] = torch.randn(2, 3, out=c)
    assert not np.array_equal(before, c.numpy())
    assert {k: v is c for k, v in results.items()} == expected["same object"]
    i = torch.zeros(2, dtype=torch.int64)
    torch.full((2,), 7, out=i)
    assert [str(i.dtype).replace("gpuaccel.", "torch."), i.tolist()] == expected["int"]
