"""``torch.functional``: the module PyTorch defines some of its Python-level functions in
(``from torch.functional import einsum``); here they are the PyTorch face's own functions.
Of PyTorch's list, unique and unique_consecutive, lu, stft/istft and the low-rank
decompositions are not in gpuaccel's face."""
from .._torch_functions import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                                broadcast_tensors, cartesian_prod, cdist, chain_matmul, meshgrid,
                                tensordot)
from .._torch_ops import norm, split
from ..linalg import einsum

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "meshgrid",
           "norm", "split", "tensordot"]
