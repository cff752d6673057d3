"""``tf.linalg.LinearOperator`` and its structured subclasses (full, diagonal, identity,
scaled identity, zeros, lower triangular, composition, adjoint, block diagonal, block lower
triangular, Kronecker, permutation, Householder, Toeplitz, tridiagonal, low-rank update).

An operator is a matrix (with batch axes) described by its structure. Each one here knows its
dense matrix (``to_dense``), from which the base class answers ``matmul``, ``matvec``,
``diag_part``, ``trace``, ``add_to_tensor`` and ``adjoint``, all differentiable; operators whose
structure gives them cheaply (diagonal, identity, triangular, permutation, Householder, and
compositions of these) also answer ``determinant``, ``log_abs_determinant``, ``solve`` and
``inverse``. A general determinant or solve needs an LU/Cholesky kernel gpuaccel lacks, and
says so. Shapes are tuples (there is no TensorShape).
"""
import numpy as np

from . import _C, _numpy_ops
from . import math as _math
from ._array_ops import concat, gather, reshape
from ._convert import as_tensors, convert_to_tensor
from ._creation import eye
from ._matrix_ops import band_part, diag, diag_part, triangular_solve, tridiagonal_matmul
from ._tensor import tensor

__all__ = ["LinearOperator", "LinearOperatorFullMatrix", "LinearOperatorDiag",
           "LinearOperatorIdentity", "LinearOperatorScaledIdentity", "LinearOperatorZeros",
           "LinearOperatorLowerTriangular", "LinearOperatorComposition", "LinearOperatorAdjoint",
           "LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
           "LinearOperatorKronecker", "LinearOperatorPermutation", "LinearOperatorHouseholder",
           "LinearOperatorToeplitz", "LinearOperatorTridiag", "LinearOperatorLowRankUpdate",
           "LinearOperatorInversion"]

_NO_KERNEL = ("needs a matrix decomposition (LU or Cholesky) kernel, which gpuaccel does not "
              "have yet; {} has no structure that avoids it")


def _product(x):
    """The product of the last axis (the determinant of a triangular or diagonal matrix)."""
    return _math.reduce_prod(x, axis=-1)


def _swap(x):
    return _C.transpose(x, -1, -2)


class LinearOperator:
    """The base: a subclass gives ``_dense()`` (and, where its structure allows,
    ``_determinant()``, ``_solve(rhs, adjoint)`` and ``_inverse()``)."""

    def __init__(self, dtype=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None, parameters=None):
        self._dtype = dtype
        self.is_non_singular = is_non_singular
        self.is_self_adjoint = is_self_adjoint
        self.is_positive_definite = is_positive_definite
        self._is_square_hint = is_square
        self.name = name or type(self).__name__
        self.parameters = parameters or {}

    def _dense(self):
        raise NotImplementedError(f"{type(self).__name__} must implement _dense()")

    def to_dense(self, name="to_dense"):
        return self._dense()

    @property
    def dtype(self):
        return self._dtype if self._dtype is not None else self._dense().dtype

    @property
    def shape(self):
        return tuple(self._dense().shape)

    @property
    def batch_shape(self):
        return self.shape[:-2]

    @property
    def tensor_rank(self):
        return len(self.shape)

    @property
    def range_dimension(self):
        return self.shape[-2]

    @property
    def domain_dimension(self):
        return self.shape[-1]

    @property
    def is_square(self):
        return self.shape[-1] == self.shape[-2]

    def shape_tensor(self, name="shape_tensor"):
        return tensor(np.array(self.shape, np.int32))

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """self @ x (or its adjoint @ x; x's adjoint with ``adjoint_arg``); an operator x gives
        the composition."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        a = self._dense()
        x = as_tensors(a, x)[1]
        return _C.matmul(_swap(a) if adjoint else a, _swap(x) if adjoint_arg else x)

    __matmul__ = matmul

    def matvec(self, x, adjoint=False, name="matvec"):
        x = convert_to_tensor(x)
        return _C.squeeze(self.matmul(_C.expand_dims(x, -1), adjoint=adjoint), [-1])

    def adjoint(self, name="adjoint"):
        return self if self.is_self_adjoint else LinearOperatorAdjoint(self)

    H = property(adjoint)

    def diag_part(self, name="diag_part"):
        return diag_part(self._dense())

    def trace(self, name="trace"):
        return _C.reduce("sum", self.diag_part(), [-1], False)

    def add_to_tensor(self, x, name="add_to_tensor"):
        return _C.binary("add", *as_tensors(self._dense(), x))

    def _determinant(self):
        raise NotImplementedError("determinant " + _NO_KERNEL.format(type(self).__name__))

    def determinant(self, name="det"):
        return self._determinant()

    def log_abs_determinant(self, name="log_abs_det"):
        return _C.unary("log", _C.unary("abs", self._determinant()))

    def _solve(self, rhs, adjoint):
        raise NotImplementedError("solve " + _NO_KERNEL.format(type(self).__name__))

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """x with self @ x = rhs (or adjoint(self) @ x = rhs)."""
        rhs = convert_to_tensor(rhs)
        return self._solve(_swap(rhs) if adjoint_arg else rhs, adjoint)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        rhs = convert_to_tensor(rhs)
        return _C.squeeze(self.solve(_C.expand_dims(rhs, -1), adjoint=adjoint), [-1])

    def _inverse(self):
        raise NotImplementedError("inverse " + _NO_KERNEL.format(type(self).__name__))

    def inverse(self, name="inverse"):
        return self._inverse()


class LinearOperatorFullMatrix(LinearOperator):
    """``matrix`` itself (..., M, N)."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)
        self._matrix = convert_to_tensor(matrix)

    def _dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """The diagonal matrix of ``diag`` (..., N)."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorDiag"):
        super().__init__(None, is_non_singular, True if is_self_adjoint is None else
                         is_self_adjoint, is_positive_definite, True, name)
        self._diag = convert_to_tensor(diag)

    def _dense(self):
        return diag(self._diag)

    def diag_part(self, name="diag_part"):
        return self._diag

    def _determinant(self):
        return _product(self._diag)

    def _solve(self, rhs, adjoint):
        return _C.binary("div", rhs, _C.expand_dims(self._diag, -1))

    def _inverse(self):
        return LinearOperatorDiag(_C.unary("reciprocal", self._diag))


class LinearOperatorIdentity(LinearOperator):
    """The ``num_rows`` square identity (with ``batch_shape`` leading axes)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)
        self._eye = eye(int(num_rows), batch_shape=batch_shape, dtype=dtype or "float32")

    def _dense(self):
        return self._eye

    def _determinant(self):
        return _product(diag_part(self._eye))

    def _solve(self, rhs, adjoint):
        return rhs

    def _inverse(self):
        return self


class LinearOperatorScaledIdentity(LinearOperator):
    """``multiplier`` times the ``num_rows`` identity (a batch of multipliers: a batch)."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        super().__init__(None, is_non_singular, True if is_self_adjoint is None else
                         is_self_adjoint, is_positive_definite, True, name)
        self._n = int(num_rows)
        self._multiplier = convert_to_tensor(multiplier)

    def _scale(self):
        return _C.expand_dims(_C.expand_dims(self._multiplier, -1), -1)

    def _dense(self):
        return _C.binary("mul", self._scale(), eye(self._n, dtype=self._multiplier.dtype))

    def _determinant(self):
        return _C.binary("pow", self._multiplier, _C.scalar_like(float(self._n),
                                                                 self._multiplier))

    def _solve(self, rhs, adjoint):
        return _C.binary("div", rhs, self._scale())

    def _inverse(self):
        return LinearOperatorScaledIdentity(self._n, _C.unary("reciprocal", self._multiplier))


class LinearOperatorZeros(LinearOperator):
    """The all-zero ``num_rows`` x ``num_columns`` matrix."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)
        cols = int(num_rows) if num_columns is None else int(num_columns)
        shape = list(batch_shape or []) + [int(num_rows), cols]
        self._zeros = _C.tensor_full(shape, 0.0, str(getattr(dtype, "name", dtype or
                                                                 "float32")), None)

    def _dense(self):
        return self._zeros

    def _determinant(self):
        return _product(diag_part(self._zeros))


def _determinants_product(operators):
    """det of a product, a block-diagonal or a block-triangular matrix: the factors' or
    diagonal blocks' determinants multiplied."""
    out = operators[0].determinant()
    for op in operators[1:]:
        out = _C.binary("mul", out, op.determinant())
    return out


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of ``tril`` (entries above the diagonal ignored)."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)
        self._tril = band_part(convert_to_tensor(tril), -1, 0)

    def _dense(self):
        return self._tril

    def _determinant(self):
        return _product(diag_part(self._tril))

    def _solve(self, rhs, adjoint):
        return triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)


class LinearOperatorComposition(LinearOperator):
    """operators[0] @ operators[1] @ ... ."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if not operators:
            raise ValueError("Expected a non-empty list of operators. Found: []")
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_o_".join(op.name for op in operators))
        self.operators = list(operators)

    def _dense(self):
        out = self.operators[-1].to_dense()
        for op in reversed(self.operators[:-1]):
            out = op.matmul(out)
        return out

    def _determinant(self):
        return _determinants_product(self.operators)

    def _solve(self, rhs, adjoint):
        # A B x = b: x = B^-1 (A^-1 b); for the adjoint B^T A^T x = b: x = A^-T (B^-T b)
        x = rhs
        for op in (self.operators[::-1] if adjoint else self.operators):
            x = op.solve(x, adjoint=adjoint)
        return x


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint (transpose, for real entries) of ``operator``."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or operator.name + "_adjoint")
        self.operator = operator

    def _dense(self):
        return _swap(self.operator.to_dense())

    def _determinant(self):
        return self.operator.determinant()

    def _solve(self, rhs, adjoint):
        return self.operator.solve(rhs, adjoint=not adjoint)


def _blocks(rows):
    """The dense matrix of a lower block-triangular list of lists of operators (missing
    blocks above the diagonal are zeros)."""
    heights = [row[-1].range_dimension for row in rows]
    widths = [row[-1].domain_dimension for row in rows]
    batch = list(rows[0][0].batch_shape)
    dtype = rows[0][0].to_dense()._dtype_name
    out_rows = []
    for i, row in enumerate(rows):
        parts = [op.to_dense() for op in row]
        parts += [_C.tensor_full(batch + [heights[i], widths[j]], 0.0, dtype, None)
                  for j in range(len(row), len(rows))]
        out_rows.append(concat(parts, -1))
    return concat(out_rows, -2)


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal matrix of square ``operators``."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name or "_ds_".join(op.name for op in operators))
        self.operators = list(operators)

    def _dense(self):
        zero = LinearOperatorZeros  # blocks off the diagonal
        rows = [[zero(op.range_dimension, other.domain_dimension,
                      batch_shape=op.batch_shape) for other in self.operators[:i]] + [op]
                for i, op in enumerate(self.operators)]
        return _blocks(rows)

    def _determinant(self):
        return _determinants_product(self.operators)

    def _solve(self, rhs, adjoint):
        pieces, start = [], 0
        lead = [(0, d, 1) for d in rhs.shape[:-2]]
        for op in self.operators:
            n = op.range_dimension
            part = _C.slice(rhs, lead + [(start, start + n, 1)])
            pieces.append(op.solve(part, adjoint=adjoint))
            start += n
        return concat(pieces, -2)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """The block lower-triangular matrix of ``operators``, a list of rows: row i holds the
    i + 1 blocks up to and including the diagonal one."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name or "LinearOperatorBlockLowerTriangular")
        self.operators = [list(row) for row in operators]
        if any(len(row) != i + 1 for i, row in enumerate(self.operators)):
            raise ValueError("Argument `operators` must be a list of rows, row i holding i + 1 "
                             "operators (the blocks up to the diagonal)")

    def _dense(self):
        return _blocks(self.operators)

    def _determinant(self):
        return _determinants_product([row[-1] for row in self.operators])


def _kron(a, b):
    """The Kronecker product of the last two axes of a (..., m, n) and b (..., p, q)."""
    m, n = a.shape[-2:]
    p, q = b.shape[-2:]
    lead = list(a.shape[:-2])
    big = _C.binary("mul", reshape(a, lead + [m, 1, n, 1]), reshape(b, list(b.shape[:-2]) +
                                                                   [1, p, 1, q]))
    return reshape(big, list(big.shape[:-4]) + [m * p, n * q])


class LinearOperatorKronecker(LinearOperator):
    """operators[0] ⊗ operators[1] ⊗ ... (the Kronecker product)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_x_".join(op.name for op in operators))
        self.operators = list(operators)

    def _dense(self):
        out = self.operators[0].to_dense()
        for op in self.operators[1:]:
            out = _kron(out, op.to_dense())
        return out

    def _determinant(self):
        # det(A ⊗ B) = det(A) ** dim(B) * det(B) ** dim(A), for square factors
        total = int(np.prod([op.domain_dimension for op in self.operators]))
        out = None
        for op in self.operators:
            power = _C.binary("pow", op.determinant(), _C.scalar_like(
                float(total // op.domain_dimension), op.determinant()))
            out = power if out is None else _C.binary("mul", out, power)
        return out


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P with P[i, perm[i]] = 1."""

    def __init__(self, perm, dtype="float32", is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorPermutation"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)
        self._perm = np.asarray(perm.numpy() if hasattr(perm, "numpy") else perm, np.int64)
        self._dtype_name = str(getattr(dtype, "name", dtype))

    def _dense(self):
        n = self._perm.shape[-1]
        return tensor(np.eye(n, dtype=np.float32)[self._perm], dtype=self._dtype_name)

    def _determinant(self):
        signs = [1.0 if _even(p) else -1.0 for p in self._perm.reshape(-1, self._perm.shape[-1])]
        return tensor(np.array(signs, np.float32).reshape(self._perm.shape[:-1]),
                      dtype=self._dtype_name)

    def _solve(self, rhs, adjoint):
        # P is orthogonal: P^-1 = P^T; P^T @ rhs puts rhs[i] at row perm[i].
        order = np.argsort(self._perm, axis=-1) if not adjoint else self._perm
        return gather(rhs, tensor(order.reshape(-1).astype(np.int64), device=rhs._device_name),
                      axis=rhs.ndim - 2) if self._perm.ndim == 1 else \
            _C.matmul(_swap(self._dense()) if not adjoint else self._dense(), rhs)


def _even(perm):
    """Whether a permutation has an even number of inversions (cycle decomposition)."""
    seen, swaps = np.zeros(len(perm), bool), 0
    for start in range(len(perm)):
        length, i = 0, start
        while not seen[i]:
            seen[i], i, length = True, perm[i], length + 1
        swaps += max(length - 1, 0)
    return swaps % 2 == 0


class LinearOperatorHouseholder(LinearOperator):
    """The reflection I - 2 v v^T / (v^T v) across the hyperplane normal to v."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        super().__init__(None, is_non_singular, True, is_positive_definite, True, name)
        self._v = convert_to_tensor(reflection_axis)

    def _dense(self):
        v = self._v
        n = v.shape[-1]
        outer = _C.binary("mul", _C.expand_dims(v, -1), _C.expand_dims(v, -2))
        norm_sq = _C.expand_dims(_C.reduce("sum", _C.unary("square", v), [-1], True), -1)
        scaled = _C.binary("div", _C.binary("mul", outer, _C.scalar_like(2.0, outer)), norm_sq)
        return _C.binary("sub", eye(n, dtype=v.dtype), scaled)

    def _determinant(self):
        # -1 for every reflection of the batch (0 * v summed gives the batch shape)
        zeros = _C.reduce("sum", _C.binary("mul", self._v, _C.scalar_like(0.0, self._v)), [-1],
                          False)
        return _C.binary("sub", zeros, _C.scalar_like(1.0, zeros))

    def _solve(self, rhs, adjoint):
        return _C.matmul(self._dense(), rhs)  # a reflection is its own inverse

    def _inverse(self):
        return self


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column ``col`` and first row ``row`` (row[0] ignored:
    col[0] is the diagonal)."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)
        self._col, self._row = as_tensors(col, row)

    def _dense(self):
        n = self._col.shape[-1]
        lead = [(0, d, 1) for d in self._row.shape[:-1]]
        tail = _numpy_ops.flip(_C.slice(self._row, lead + [(1, n, 1)]), (-1,))
        values = concat([tail, self._col], -1)  # row[n-1..1], col[0..n-1]
        i, j = np.ogrid[:n, :n]
        index = tensor((n - 1 + i - j).reshape(-1).astype(np.int64),
                       device=values._device_name)
        picked = gather(values, index, axis=values.ndim - 1)
        return reshape(picked, list(values.shape[:-1]) + [n, n])


class LinearOperatorTridiag(LinearOperator):
    """The tridiagonal matrix of ``diagonals`` ('compact' (..., 3, N), 'sequence' or
    'matrix', as tf.linalg.tridiagonal_matmul reads them)."""

    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)
        self._diagonals = diagonals if diagonals_format == "sequence" else \
            convert_to_tensor(diagonals)
        self._format = diagonals_format

    def _size(self):
        first = self._diagonals[0] if self._format == "sequence" else self._diagonals
        return convert_to_tensor(first).shape[-1]

    def _dense(self):
        n = self._size()
        return tridiagonal_matmul(self._diagonals, eye(n), diagonals_format=self._format)

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        if isinstance(x, LinearOperator) or adjoint:
            return super().matmul(x, adjoint, adjoint_arg)
        x = convert_to_tensor(x)
        return tridiagonal_matmul(self._diagonals, _swap(x) if adjoint_arg else x,
                                  diagonals_format=self._format)


class LinearOperatorLowRankUpdate(LinearOperator):
    """base_operator + u @ diag(diag_update) @ v^T (v defaults to u, diag_update to ones)."""

    def __init__(self, base_operator, u, diag_update=None, v=None, is_diag_update_positive=None,
                 is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorLowRankUpdate"):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)
        self.base_operator = base_operator
        self.u = convert_to_tensor(u)
        self.v = self.u if v is None else convert_to_tensor(v)
        self.diag_update = None if diag_update is None else convert_to_tensor(diag_update)

    def _dense(self):
        u = self.u if self.diag_update is None else \
            _C.binary("mul", self.u, _C.expand_dims(self.diag_update, -2))
        return _C.binary("add", self.base_operator.to_dense(), _C.matmul(u, _swap(self.v)))


class LinearOperatorInversion(LinearOperator):
    """The inverse of ``operator``: its matmul is the operator's solve and its solve the
    operator's matmul (so it works where the operator can solve without a decomposition)."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        super().__init__(None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name or operator.name + "_inv")
        self.operator = operator

    def _dense(self):
        n = self.operator.domain_dimension
        identity = eye(n, batch_shape=list(self.operator.batch_shape) or None,
                       dtype=self.operator.dtype)
        return self.operator.solve(identity)

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        if isinstance(x, LinearOperator):
            return super().matmul(x, adjoint, adjoint_arg)
        x = convert_to_tensor(x)
        return self.operator.solve(_swap(x) if adjoint_arg else x, adjoint=adjoint)

    def _determinant(self):
        return _C.unary("reciprocal", self.operator.determinant())

    def _solve(self, rhs, adjoint):
        return self.operator.matmul(rhs, adjoint=adjoint)
