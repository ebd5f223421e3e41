"""The ``jaxpr`` dialect's op table: every primitive declared once.

An ``OpDef`` names the primitive (``jaxpr.<name>`` in MLIR, ``<name>`` in jaxpr
text), its operand count, its parameters with their kinds, its result rule, and
which parameters JAX prints. The OpView classes, the verifier and the printer
are all derived from this table; passes and backends key their rule tables on
the same names.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from . import control_flow as CF
from . import params as P
from . import convolution as CV
from . import fft as FT
from . import gather_scatter as GS
from . import linalg as LA
from . import shapes as S
from . import solves as SV
from . import extras as EX
from . import callbacks as CB

VARIADIC = -1


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: P.ParamKind
    hide: Callable[[object], bool] | None = None  # JAX omits it from printing when true


@dataclasses.dataclass(frozen=True)
class OpDef:
    """One primitive. ``num_operands`` is a count or ``VARIADIC``."""

    name: str
    num_operands: int
    params: tuple[Param, ...]
    rule: Callable
    doc: str = ""
    first_params: tuple[str, ...] = ()  # printed before the sorted rest (pjit's name=)

    @property
    def mlir_name(self) -> str:
        return "jaxpr." + self.name

    def result_avals(self, avals_in, params):
        return self.rule(self.name, avals_in, **params)

    def printed_params(self, params: dict):
        shown = [p for p in self.params if not (p.hide and p.hide(params[p.name]))]
        first = [p for p in shown if p.name in self.first_params]
        rest = sorted((p for p in shown if p.name not in self.first_params), key=lambda p: p.name)
        return [(p, params[p.name]) for p in first + rest]


OPS: dict[str, OpDef] = {}


class Primitive(str):
    """A primitive as JAX exposes it (``lax.add_p``, ``eqn.primitive``): a ``str`` equal to irax's name of it, so
    that rule tables keyed on names find it, with JAX's ``name``, ``multiple_results`` and ``bind``."""

    @property
    def name(self) -> str:
        return jax_name(OPS[str(self)])

    @property
    def multiple_results(self) -> bool:
        return str(self) in MULTIPLE_RESULTS

    def bind(self, *args, **params):
        from irax.core import bind  # the op table names primitives; binding them is the frontend's
        outs = bind(str(self), *args, **params)
        return outs if self.multiple_results else outs[0]

    def __repr__(self):
        return self.name


PRIMITIVES: dict[str, Primitive] = {}
# The primitives JAX binds with a list of results, however many there are.
MULTIPLE_RESULTS = {"approx_top_k", "cond", "device_put", "eig", "eigh", "geqp3", "geqrf", "hessenberg", "lu",
                    "optimization_barrier", "qr", "reduce", "scan", "schur", "sort", "split", "svd", "top_k",
                    "tridiagonal", "unstack", "while", "custom_linear_solve", "pjit", "custom_jvp_call",
                    "custom_vjp_call", "checkpoint", "pure_callback", "io_callback", "debug_callback", "debug_print"}


def _is_none(v):
    return v is None


def _is_empty(v):
    return not v


def declare(name, num_operands, rule, *params, doc="", first_params=()):
    OPS[name] = OpDef(name, num_operands, tuple(params), rule, doc, first_params)
    PRIMITIVES[name] = Primitive(name)


FLOAT = (np.floating,)
INEXACT = (np.inexact,)
INTEGER = (np.integer,)
NUMBER = (np.integer, np.inexact)
ANY = (np.integer, np.inexact, np.bool_)
BITWISE = (np.integer, np.bool_)
ORDERED = (np.integer, np.floating, np.bool_)
_bool = lambda dt: np.dtype(np.bool_)

for _name in ("exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan",
              "sqrt", "rsqrt"):
    declare(_name, 1, S.nary(INEXACT), doc=f"Elementwise {_name}.")
for _name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
    declare(_name, 1, S.nary(INEXACT), doc=f"Elementwise {_name}.")
for _name in ("floor", "ceil", "erf", "erfc", "erf_inv", "lgamma", "digamma", "cbrt"):
    declare(_name, 1, S.nary(FLOAT), doc=f"Elementwise {_name}.")
for _name in ("neg", "sign", "square"):
    declare(_name, 1, S.nary(NUMBER), doc=f"Elementwise {_name}.")
declare("stop_gradient", 1, S.nary(ANY), doc="Identity whose derivative is zero (booleans too, as JAX's).")
declare("copy", 1, S.nary(ANY), doc="A fresh array equal to its operand (``jnp.array(x)``, ``x.copy()``).")
declare("abs", 1, S.nary((np.inexact, np.signedinteger), S.real_dtype),
        doc="Elementwise absolute value (real result for complex).")
declare("round", 1, S.nary(FLOAT), Param("rounding_method", P.INT),
        doc="Rounds to an integral value: 0 away from zero, 1 to nearest even.")
declare("is_finite", 1, S.nary(FLOAT, _bool), doc="True where finite.")
declare("not", 1, S.nary(BITWISE), doc="Bitwise/logical not.")
declare("population_count", 1, S.nary(INTEGER), doc="Number of set bits.")
declare("clz", 1, S.nary(INTEGER), doc="Number of leading zero bits.")
declare("integer_pow", 1, S.integer_pow, Param("y", P.INT), doc="x ** y for a static integer y.")
declare("real", 1, S.nary((np.complexfloating,), S.real_dtype), doc="Real part.")
declare("imag", 1, S.nary((np.complexfloating,), S.real_dtype), doc="Imaginary part.")
declare("conj", 1, S.nary((np.float32, np.complexfloating, np.float64), S.complex_dtype),
        Param("input_dtype", P.Optional(P.DTYPE), hide=_is_none),
        doc="Complex conjugate (of a real operand: the operand as a complex number).")

for _name in ("add", "sub", "mul", "div", "rem", "max", "min"):
    declare(_name, 2, S.nary({"max": ANY, "min": ANY, "rem": (np.integer, np.floating)}.get(_name, NUMBER)),
            doc=f"Elementwise {_name} of two operands of one dtype.")
declare("add_any", 2, S.nary(NUMBER), doc="Adds two tangents or cotangents (autodiff's accumulation).")
declare("polygamma", 2, S.nary(FLOAT), doc="The m-th derivative of digamma at x (m a whole number, else NaN).")
declare("igamma", 2, S.nary(FLOAT), doc="The regularized lower incomplete gamma function P(a, x).")
declare("igammac", 2, S.nary(FLOAT), doc="The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).")
declare("igamma_grad_a", 2, S.nary(FLOAT), doc="The derivative of igamma(a, x) with respect to a.")
declare("regularized_incomplete_beta", 3, S.nary(FLOAT), doc="The regularized incomplete beta function I_x(a, b).")
declare("zeta", 2, S.nary(FLOAT), doc="The Hurwitz zeta function zeta(x, q) = sum over n >= 0 of (n + q) ** -x.")
declare("bessel_i0e", 1, S.nary(FLOAT), doc="exp(-|x|) I0(x): the modified Bessel function of order 0, scaled.")
declare("bessel_i1e", 1, S.nary(FLOAT), doc="exp(-|x|) I1(x): the modified Bessel function of order 1, scaled.")
declare("reduce_precision", 1, S.nary(FLOAT), Param("exponent_bits", P.INT), Param("mantissa_bits", P.INT),
        doc="Rounds to the nearest value of a float format with these bit counts (to nearest even; overflow to inf).")
for _name in ("pow", "atan2", "nextafter"):
    declare(_name, 2, S.nary(INEXACT if _name == "pow" else FLOAT), doc=f"Elementwise {_name}.")
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    declare(_name, 2, S.nary(ANY if _name in ("eq", "ne") else ORDERED, _bool), doc=f"Elementwise comparison {_name}.")
for _name in ("eq_to", "le_to", "lt_to"):
    declare(_name, 2, S.nary(ORDERED, _bool), doc=f"Elementwise comparison {_name[:2]} in IEEE's total order "
            "(-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN): sort's and searchsorted's comparators.")
for _name in ("and", "or", "xor"):
    declare(_name, 2, S.nary(BITWISE), doc=f"Bitwise/logical {_name}.")
for _name in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
    declare(_name, 2, S.nary(INTEGER), doc=f"Elementwise {_name}.")
declare("threefry2x32", 4, S.threefry2x32,
        doc="The Threefry-2x32 block cipher (20 rounds) of counts (x1, x2) under key (k1, k2): random bits.")
declare("complex", 2, S.nary(FLOAT, S.complex_dtype), doc="Complex number from real and imaginary parts.")

declare("select_n", VARIADIC, S.select_n, doc="Picks cases[which] elementwise.")
declare("clamp", 3, S.clamp, doc="min(max(x, lo), hi).")
declare("convert_element_type", 1, S.convert_element_type,
        Param("new_dtype", P.DTYPE), Param("weak_type", P.BOOL),
        doc="Casts to new_dtype.")
declare("bitcast_convert_type", 1, S.bitcast_convert_type, Param("new_dtype", P.DTYPE),
        doc="Reinterprets the bits as new_dtype.")
declare("broadcast_in_dim", 1, S.broadcast_in_dim,
        Param("shape", P.INTS, hide=lambda v: True),
        Param("broadcast_dimensions", P.INTS, hide=_is_empty),
        Param("sharding", P.NONE, hide=lambda v: True),
        doc="Broadcasts to shape, operand axis i landing on broadcast_dimensions[i].")
declare("reshape", 1, S.reshape, Param("new_sizes", P.INTS), Param("dimensions", P.Optional(P.INTS)),
        Param("sharding", P.NONE), doc="Row-major reshape of the operand transposed by dimensions (if given).")
declare("squeeze", 1, S.squeeze, Param("dimensions", P.INTS), doc="Removes unit axes.")
declare("transpose", 1, S.transpose, Param("permutation", P.INTS), doc="Permutes axes.")
declare("rev", 1, S.rev, Param("dimensions", P.INTS), doc="Reverses the given axes.")
declare("pad", 2, S.pad, Param("padding_config", P.PairsKind(3)),
        doc="Pads with (low, high, interior) per axis; negative low/high crop.")
declare("concatenate", VARIADIC, S.concatenate, Param("dimension", P.INT), doc="Joins along an axis.")
declare("split", 1, S.split, Param("sizes", P.INTS), Param("axis", P.INT),
        doc="Cuts into consecutive pieces of the given sizes along an axis (one result per piece).")
declare("stack", VARIADIC, S.stack, Param("axis", P.INT), doc="Joins equal-shaped operands along a new axis.")
declare("slice", 1, S.slice_rule, Param("start_indices", P.INTS), Param("limit_indices", P.INTS),
        Param("strides", P.Optional(P.INTS)), doc="Static strided slice.")
declare("dynamic_slice", VARIADIC, S.dynamic_slice, Param("slice_sizes", P.INTS),
        doc="Slice at traced start indices, clamped into range.")
declare("dynamic_update_slice", VARIADIC, S.dynamic_update_slice,
        doc="Writes update at traced start indices, clamped into range.")
declare("gather", 2, GS.gather_shape, Param("dimension_numbers", GS.GATHER_DIMS),
        Param("slice_sizes", P.INTS), Param("indices_are_sorted", P.BOOL), Param("unique_indices", P.BOOL),
        Param("mode", GS.MODE), Param("fill_value", P.Optional(GS.PY_SCALAR)),
        doc="Slices of the operand at start indices (XLA's gather); out-of-bounds starts as mode says.")
for _name, _combiner in GS.SCATTERS.items():
    declare(_name, 3, GS.scatter_shape, Param("dimension_numbers", GS.SCATTER_DIMS),
            Param("indices_are_sorted", P.BOOL), Param("unique_indices", P.BOOL), Param("mode", GS.MODE),
            Param("update_jaxpr", GS.AppliedJaxprKind() if _combiner is None else GS.UpdateJaxprKind(_combiner)),
            Param("update_consts", P.Fixed(())),
            Param("transposed", P.Optional(P.BOOL), hide=lambda v: True),
            doc=f"Writes update windows into the operand at start indices (XLA's scatter), "
                f"{'replacing' if _combiner is None else 'combining with ' + _combiner}; out-of-bounds windows "
                f"as mode says.")
declare("empty", 0, S.empty, Param("dtype", P.DTYPE), Param("out_sharding", P.NONE), Param("shape", P.INTS),
        doc="An array whose values the program does not define (lax.empty); irax's are zeros, as XLA's CPU.")
declare("empty2", 0, S.empty2, Param("dtype", P.DTYPE), Param("memory_space", P.Fixed("MemorySpace.Device")),
        doc="A scalar whose value the program does not define (JAX's fill of the residuals a branch of a "
            "differentiated cond does not make); zero here.")
declare("iota", 0, S.iota, Param("dtype", P.DTYPE), Param("shape", P.INTS), Param("dimension", P.INT),
        Param("sharding", P.NONE), doc="Counts along one axis.")
declare("reduce_sum", 1, S.reduce(NUMBER), Param("axes", P.INTS), Param("out_sharding", P.NONE),
        doc="Sum over axes.")
for _name in ("reduce_max", "reduce_min", "reduce_prod"):
    declare(_name, 1, S.reduce(ANY if _name != "reduce_prod" else NUMBER), Param("axes", P.INTS),
            doc=f"{_name[7:]} over axes.")
for _name in ("reduce_and", "reduce_or", "reduce_xor"):
    declare(_name, 1, S.reduce(BITWISE), Param("axes", P.INTS), doc=f"Bitwise {_name[7:]} over axes.")
for _name in ("argmax", "argmin"):
    declare(_name, 1, S.argminmax, Param("axes", P.INTS), Param("index_dtype", P.DTYPE),
            doc=f"Index of the {_name[3:]} along one axis (first one on ties, NaN wins).")
declare("dot_general", 2, S.dot_general, Param("dimension_numbers", P.DOT_DIMS),
        Param("precision", P.Optional(CV.PRECISION), hide=_is_none),
        Param("preferred_element_type", P.Optional(P.DTYPE), hide=_is_none),
        doc="Tensor contraction with batch dimensions.")
declare("conv_general_dilated", 2, CV.conv_shape, Param("window_strides", P.INTS), Param("padding", CV.PADDING),
        Param("lhs_dilation", P.INTS), Param("rhs_dilation", P.INTS), Param("dimension_numbers", CV.CONV_DIMS),
        Param("feature_group_count", P.INT), Param("batch_group_count", P.INT),
        Param("precision", P.Optional(CV.PRECISION)), Param("preferred_element_type", P.Optional(P.DTYPE)),
        Param("out_sharding", P.NONE), doc="N-d convolution with strides, padding, dilations and groups (XLA's Conv).")
_WINDOW = (Param("base_dilation", P.INTS), Param("padding", CV.PADDING), Param("window_dilation", P.INTS),
           Param("window_dimensions", P.INTS), Param("window_strides", P.INTS))
for _name in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    declare(_name, 1, CV.reduce_window_shape, *_WINDOW, doc=f"{_name[14:]} over each (padded, dilated) window.")
declare("select_and_gather_add", 2, CV.select_and_gather_add_shape, Param("select_prim", P.STR), *_WINDOW,
        doc="Per window, the tangent at the operand element select_prim (ge: max, le: min) picks.")
declare("select_and_scatter_add", 2, CV.select_and_scatter_add_shape, Param("padding", CV.PADDING),
        Param("select_prim", P.STR), Param("window_dimensions", P.INTS), Param("window_strides", P.INTS),
        doc="Adds each source element at the operand element select_prim picks in its window (max-pool's VJP).")
for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    declare(_name, 1, S.cumulative, Param("axis", P.INT), Param("reverse", P.BOOL),
            doc=f"Inclusive {_name[3:]} scan along an axis.")
declare("sort", VARIADIC, S.sort, Param("dimension", P.INT), Param("is_stable", P.BOOL), Param("num_keys", P.INT),
        doc="Sorts the operands together along one axis, lexicographically by the first num_keys (NaN last).")
declare("top_k", 1, S.top_k, Param("k", P.INT), Param("axis", P.INT),
        doc="The k largest entries along an axis and their int32 indices (ties: the lower index first).")
declare("fft", 1, FT.fft_shape, Param("fft_lengths", P.INTS), Param("fft_type", P.INT),
        doc="FFT (0), IFFT (1), RFFT (2) or IRFFT (3) over the trailing len(fft_lengths) axes.")
declare("cholesky", 1, LA.cholesky, doc="The lower Cholesky factor of each matrix (upper triangle: the input's, "
        "as LAPACK's potrf leaves it; all NaN where not positive definite).")
declare("cholesky_update", 2, LA.cholesky_update,
        doc="The upper Cholesky factor of R^T R + w w^T from R's: a Givens rotation of each row of R with w "
            "(JAX's own loop; no batching rule, as JAX's).")
declare("triangular_solve", 2, LA.triangular_solve, *(Param(_p, P.BOOL) for _p in LA.TRIANGULAR_SOLVE_PARAMS),
        doc="Solves op(a) x = b (x op(a) = b unless left_side) for triangular a, reading one triangle of a.")
declare("tridiagonal_solve", 4, LA.tridiagonal_solve, Param("perturb_singular", P.BOOL),
        doc="Solves T x = b for the tridiagonal T of each (dl, d, du): elimination with row interchanges (tiny "
            "pivots perturbed if perturb_singular, else all NaN where a pivot is zero).")
declare("symmetric_product", 2, LA.symmetric_product, Param("alpha", P.SCALAR), Param("beta", P.SCALAR),
        doc="alpha a a^T + beta c for each matrix a and square c (JAX's syrk).")
declare("householder_product", 2, LA.householder_product,
        doc="The first n columns of the product of the Householder reflectors I - tau_i v_i v_i^H stored below the "
            "diagonal of each m x n matrix (LAPACK's orgqr).")
declare("hessenberg", 1, LA.hessenberg,
        doc="Each square matrix reduced to upper Hessenberg form by Householder reflectors from both sides, the "
            "reflectors stored below the subdiagonal, and their scale factors (LAPACK's gehrd).")
declare("geqrf", 1, LA.geqrf,
        doc="Householder QR of each matrix as LAPACK's geqrf leaves it: R on and above the diagonal, the reflectors "
            "I - tau_i v_i v_i^H below it (v_i's leading one implied), and their scale factors tau.")
declare("geqp3", 2, LA.geqp3, Param("use_magma", P.Optional(P.BOOL)),
        doc="Householder QR with column pivoting as LAPACK's geqp3 leaves it: geqrf's R and reflectors of the "
            "permuted matrix, the permutation (1-based; columns marked nonzero on entry go first) and the scale "
            "factors.")
declare("ormqr", 3, LA.ormqr, Param("left", P.BOOL), Param("transpose", P.BOOL),
        doc="c multiplied by the Q of geqrf's reflectors (Q c, Q^H c, c Q or c Q^H) without forming Q (LAPACK's "
            "ormqr/unmqr).")
declare("tridiagonal", 1, LA.tridiagonal, Param("lower", P.BOOL),
        doc="Each Hermitian matrix (one triangle read) reduced to tridiagonal form by Householder reflectors from "
            "both sides: the reflectors stored in that triangle, the diagonal, the off-diagonal and the scale "
            "factors (LAPACK's sytrd/hetrd).")
declare("lu", 1, LA.lu, doc="LU decomposition with partial pivoting: L (unit diagonal implied) and U in one matrix, "
        "the row swaps and the permutation (int32).")
declare("lu_pivots_to_permutation", 1, LA.lu_pivots_to_permutation, Param("permutation_size", P.INT),
        doc="The permutation of range(permutation_size) that lu's row swaps make (swap i with pivots[i], in order).")
declare("eigh", 1, LA.eigh, Param("algorithm", P.Optional(P.STR)), Param("lower", P.BOOL),
        Param("sort_eigenvalues", P.BOOL), Param("subset_by_index", P.Optional(P.INTS)),
        doc="Eigenvectors (columns) and ascending eigenvalues of each symmetric matrix, read from one triangle.")
declare("eig", 1, LA.eig, Param("compute_left_eigenvectors", P.BOOL), Param("compute_right_eigenvectors", P.BOOL),
        Param("enable_eigvec_derivs", P.BOOL), Param("implementation", P.Optional(P.STR)),
        doc="Eigenvalues of each general matrix, then its left and right eigenvectors (columns; unit norm, largest "
            "component real), as LAPACK's geev gives them: computed on the host, as JAX's CPU eig is.")
declare("schur", 1, LA.schur, Param("compute_schur_vectors", P.BOOL),
        Param("select_callable", P.Optional(CB.PY_OBJECT)), Param("sort_eig_vals", P.BOOL),
        doc="The Schur form of each square matrix (quasi-triangular, 2x2 blocks for complex pairs, if real) and its "
            "Schur vectors, as LAPACK's gees gives them: computed on the host, as JAX's CPU schur is.")
declare("svd", 1, LA.svd, Param("algorithm", P.Optional(P.STR)), Param("compute_uv", P.BOOL),
        Param("full_matrices", P.BOOL), Param("subset_by_index", P.Optional(P.INTS)),
        doc="Descending singular values, then (compute_uv) the left singular vectors and the adjoint of the right.")
declare("qr", 1, LA.qr, Param("full_matrices", P.BOOL), Param("pivoting", P.BOOL),
        Param("use_magma", P.Optional(P.BOOL)), doc="QR decomposition: orthogonal Q and upper triangular R.")
declare("pjit", VARIADIC, None, Param("name", P.STR), Param("callee", P.SYMBOL),
        first_params=("name",), doc="Calls another function of the module (a nested jit).")
_hidden = lambda v: True  # noqa: E731
declare("custom_jvp_call", VARIADIC, None, Param("name", P.STR), Param("callee", P.SYMBOL), Param("jvp", P.STR),
        Param("jvp_callee", P.SYMBOL, hide=_hidden), Param("symbolic_zeros", P.BOOL), first_params=("name",),
        doc="Calls callee; its derivative is jvp_callee(primals, tangents) (jax.custom_jvp). Operands: callee's "
            "arguments, then jvp_callee's constants.")
declare("custom_vjp_call", VARIADIC, None, Param("name", P.STR), Param("callee", P.SYMBOL), Param("fwd", P.STR),
        Param("fwd_callee", P.SYMBOL, hide=_hidden), Param("bwd", P.STR), Param("bwd_callee", P.SYMBOL, hide=_hidden),
        Param("symbolic_zeros", P.BOOL), first_params=("name",),
        doc="Calls callee; reverse mode runs fwd_callee (outputs and residuals) and bwd_callee (residuals, "
            "cotangents) instead (jax.custom_vjp). Operands: callee's arguments, then fwd's and bwd's constants.")
declare("custom_lin", VARIADIC, None, Param("num_res", P.INT), Param("bwd", P.STR), Param("bwd_callee", P.SYMBOL),
        doc="The linear part of a custom_vjp function's derivative: only its transpose, bwd_callee on the "
            "residuals and cotangents, can be evaluated. Operands: residuals, bwd's constants (num_res in all), "
            "then the tangents; results: the types of bwd_callee's cotangent arguments.")
declare("cond", VARIADIC, None, Param("branches", CF.SYMBOLS),
        Param("branches_platforms", P.Optional(P.PLATFORMS), hide=lambda v: v is None),
        doc="Runs branches[index] (clamped into range) on the operands. Operands: the i32 index, the branches' "
            "shared constants, then their arguments (see ir/control_flow.py). branches_platforms: the platforms of "
            "each branch when the index is a platform_index (lax.platform_dependent), else None.")
declare("while", VARIADIC, None, Param("body_jaxpr", P.SYMBOL), Param("body_nconsts", P.INT),
        Param("cond_jaxpr", P.SYMBOL), Param("cond_nconsts", P.INT),
        doc="Applies body_jaxpr to the carry while cond_jaxpr of it is true (a batched predicate, a bool array "
            "prefixing every carry's shape: while any element is, the others' carry kept). Operands: cond_jaxpr's "
            "constants, body_jaxpr's constants, then the initial carry.")
declare("scan", VARIADIC, None, Param("jaxpr", P.SYMBOL), Param("length", P.INT), Param("num_carry", P.INT),
        Param("num_consts", P.INT), Param("reverse", P.BOOL), Param("unroll", P.INT),
        doc="Loops jaxpr over the leading axis of xs (backwards if reverse), threading the carry and stacking "
            "the per-step outputs. Operands: constants, the initial carry, then xs.")
declare("reduce", VARIADIC, None, Param("computation", P.STR), Param("dimensions", P.INTS),
        Param("jaxpr", P.SYMBOL),
        doc="Folds jaxpr over the dimensions of the operands from the init values (lax.reduce of a computation "
            "that is no monoid); computation is the user's function as JAX prints it. Operands: the operands, "
            "then one scalar init value each.")
declare("custom_linear_solve", VARIADIC, None, Param("const_lengths", SV.CONST_LENGTHS), Param("jaxprs", SV.JAXPRS),
        doc="solve applied to b, whose derivatives are linear solves too (jax.lax.custom_linear_solve). Operands: "
            "the constants of matvec, vecmat, solve and transpose_solve, then b (see ir/solves.py).")
declare("tile", 1, EX.tile, Param("reps", P.INTS), doc="The operand repeated reps[i] times along each axis i.")
declare("unstack", 1, EX.unstack, Param("axis", P.INT), doc="The operand's slices along axis, one result each.")
declare("mulhi", 2, S.nary(INTEGER), doc="The high half of each 2N-bit product of N-bit integers.")
declare("approx_top_k", 1, EX.approx_top_k, Param("k", P.INT), Param("reduction_dimension", P.INT),
        Param("recall_target", GS.PY_SCALAR), Param("is_max_k", P.BOOL), Param("reduction_input_size_override", P.INT),
        Param("aggregate_to_topk", P.BOOL),
        doc="The k largest (is_max_k) or smallest entries along reduction_dimension and their int32 indices; exact "
            "here, as XLA's CPU fallback is.")
declare("optimization_barrier", VARIADIC, EX.optimization_barrier,
        doc="The identity on its operands, which the compiler may not move computations across.")
declare("device_put", VARIADIC, EX.device_put, Param("devices", P.TOKENS), Param("srcs", P.TOKENS),
        Param("copy_semantics", P.TOKENS),
        doc="Its operands placed on devices (jax.device_put under a trace): the identity on values; each device, "
            "source and copy semantics is kept as the text JAX prints (None: where the operand is).")
declare("platform_index", 0, EX.platform_index, Param("platforms", P.PLATFORMS),
        doc="The index in platforms of the platform compiled for (lax.platform_dependent), that of the default "
            "branch (None) for a platform not named.")
declare("literal", 0, S.literal, Param("value", P.SCALAR), Param("weak_type", P.Optional(P.BOOL)),
        Param("shown", P.Optional(P.STR), hide=_hidden),
        doc="A scalar constant; printed inline as JAX's literals are. weak_type marks a Python scalar's, shown "
            "its text where JAX prints the Python value itself (0.1, not its float32 0.10000000149011612).")

# Host callbacks (ir/callbacks.py): the user's Python function, run on the host from compiled code.
declare("pure_callback", VARIADIC, CB.callback_results, Param("callback", CB.PY_OBJECT),
        Param("result_avals", CB.AVALS), Param("sharding", P.NONE), Param("vmap_method", P.Optional(P.STR)),
        doc="callback(*operands) on the host, results of result_avals; pure, so unused calls may be dropped.")
declare("io_callback", VARIADIC, CB.callback_results, Param("callback", CB.PY_OBJECT), Param("ordered", P.BOOL),
        Param("result_avals", CB.AVALS), Param("sharding", P.NONE),
        doc="callback(*operands) on the host for its effect and results (jax.experimental.io_callback).")
declare("debug_callback", VARIADIC, CB.no_results, Param("callback", CB.PY_OBJECT), Param("effect", P.STR),
        Param("partitioned", P.BOOL), doc="callback(*operands) on the host, for its effect (jax.debug.callback).")
declare("debug_print", VARIADIC, CB.no_results, Param("fmt", P.STR), Param("has_placeholders", P.BOOL),
        Param("in_tree", CB.PY_OBJECT), Param("logging_record", P.NONE), Param("np_printoptions", CB.PY_OBJECT),
        Param("ordered", P.BOOL), Param("partitioned", P.BOOL), Param("static_args", CB.PY_OBJECT),
        doc="Prints fmt formatted with the operands (rebuilt by in_tree, with static_args) on the host, under "
            "NumPy's np_printoptions (jax.debug.print).")

declare("checkpoint", VARIADIC, None, Param("callee", P.SYMBOL), Param("differentiated", P.BOOL),
        Param("policy", P.STR), Param("prevent_cse", P.BOOL),
        doc="Calls callee; reverse mode recomputes its values instead of saving them, except those the policy "
            "saves (jax.checkpoint). policy is its printed form: None, DotsSaveable(...), SaveOnlyTheseNames(...).")
declare("name", 1, lambda primitive, avals_in, *, name: list(avals_in), Param("name", P.STR),
        doc="The identity, naming its value for checkpoint policies.")

# Collectives over named axes (vmap's axis_name). Under vmap a name becomes a positional axis (psum) or other ops
# (all_gather, reduce_scatter, axis_index); a name left by evaluation or lowering is unbound (NameError).
for _name in ("psum", "pmax", "pmin"):
    declare(_name, 1, S.collective_reduce(NUMBER if _name == "psum" else ANY), Param("axes", P.AXES),
            Param("axis_index_groups", P.NONE),
            doc=f"All-reduce ({_name[1:]}) over axes: axis names and positional axes (reduced as reduce_{_name[1:]}).")
declare("all_gather", 1, S.all_gather, Param("all_gather_dimension", P.INT), Param("axis_name", P.AXES),
        Param("axis_index_groups", P.NONE), Param("axis_size", P.INT), Param("tiled", P.BOOL),
        doc="Every example's operand along the named axes, stacked (tiled: concatenated) at all_gather_dimension.")
declare("reduce_scatter", 1, S.reduce_scatter, Param("axis_name", P.AXES), Param("scatter_dimension", P.INT),
        Param("axis_index_groups", P.NONE), Param("axis_size", P.INT), Param("tiled", P.BOOL),
        doc="psum over the named axes, each example keeping its slice of scatter_dimension (lax.psum_scatter).")
declare("all_to_all", 1, S.all_to_all, Param("axis_index_groups", P.NONE), Param("axis_name", P.AXES),
        Param("axis_size", P.INT, hide=_hidden), Param("concat_axis", P.INT), Param("split_axis", P.INT),
        Param("tiled", P.BOOL),
        doc="split_axis cut into axis_size chunks, chunk k sent to example k along the named axes, the chunks "
            "received stacked along concat_axis (axis_size: the axes' size, which JAX's abstract eval looks up).")
declare("ppermute", 1, lambda primitive, avals_in, *, axis_name, perm: list(avals_in), Param("axis_name", P.AXES),
        Param("perm", P.PairsKind(2)),
        doc="Each example's operand sent along the named axes from source to destination index ((src, dst) pairs).")
declare("axis_index", 0, S.axis_index, Param("axis_name", P.STR), doc="The example's index along a named axis.")

TRIVIAL_PRINT_NAMES = {"pjit": "jit", "checkpoint": "remat2", **{n: n.replace("_", "-") for n in GS.SCATTERS}}
# Ops that call a function of the module: the callee takes their first operands, and prints as this param.
CALL_BODY_PARAMS = {"pjit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
                    "checkpoint": "jaxpr"}


def jax_name(opdef: OpDef) -> str:
    """The primitive's name in JAX's text (``jaxpr.pjit`` prints as ``jit``)."""
    return TRIVIAL_PRINT_NAMES.get(opdef.name, opdef.name)


def get(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise NotImplementedError(f"primitive {name!r} is not defined in the jaxpr dialect") from None
