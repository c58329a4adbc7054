"""Contractions: `lax.dot_general` and the jnp wrappers built on it (`@`, `jnp.matmul`,
`jnp.dot`, two-operand `jnp.einsum`).

`_dot_general_sharding_rule`: batch dimensions and contracting dimensions must be sharded
consistently (None matches anything); a contracting dimension sharded on both sides is
ambiguous (the result could be reduce-scattered anywhere) unless `out_sharding=` says where;
otherwise the result is batch + lhs free + rhs free dimensions, each with its operand's axes.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.dtypes import DType
from shardls.core.spec import PartitionSpec
from shardls.core.typing.elementwise import convert, partitions_text, promote_dtypes
from shardls.core.typing.errors import VALUE_ERROR, ShapeError, reject
from shardls.core.typing.permute import expand_dims, squeeze, transpose
from shardls.core.typing.reductions import reduce_generic
from shardls.core.typing.results import check_legal, check_sharding, result, short
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.types import ShardedType, SpecAxes

Dims = tuple[int, ...]
DimensionNumbers = tuple[tuple[Dims, Dims], tuple[Dims, Dims]]


def _delete(items: Sequence[object], drop: Sequence[int]) -> list[object]:
    gone = set(drop)
    return [v for i, v in enumerate(items) if i not in gone]


def dot_general(
    lhs: ShardedType,
    rhs: ShardedType,
    dimension_numbers: DimensionNumbers,
    *,
    out_sharding: PartitionSpec | None = None,
    preferred_element_type: DType | None = None,
) -> ShardedType:
    """`lax.dot_general` (dtypes already promoted by the caller, as jnp does)."""
    (lc, rc), (lb, rb) = dimension_numbers
    _check_shapes(lhs, rhs, lc, rc, lb, rb)
    shape = (
        tuple(lhs.shape[i] for i in lb)
        + tuple(n for i, n in enumerate(lhs.shape) if i not in (*lc, *lb))
        + tuple(n for i, n in enumerate(rhs.shape) if i not in (*rc, *rb))
    )
    dtype = preferred_element_type or lhs.dtype
    l_contract = tuple(lhs.spec[i] for i in lc)
    r_contract = tuple(rhs.spec[i] for i in rc)
    if out_sharding is not None:
        typed = typed_out_sharding(lhs.mesh, out_sharding, shape, dtype)
        check_legal("dot_general", [lhs, rhs], shape, dtype, typed.spec)
        _no_unreduced_operands(lhs, rhs)
        unreduced: frozenset[str] = frozenset()
        if typed.unreduced:
            if l_contract != r_contract:
                raise reject(
                    "SH311",
                    "lhs and rhs contracting dims should be sharded identically when out_sharding provided "
                    "to dot_general mentions unreduced_axes. Got "
                    f"lhs_contracting_spec={partitions_text(l_contract)}, "
                    f"rhs_contracting_spec={partitions_text(r_contract)}",
                )
            contracted = frozenset(a for axes in l_contract for a in axes)
            if typed.unreduced != contracted:
                raise reject(
                    "SH311",
                    "out_sharding's unreduced axes should be equal to the contracting specs. Got unreduced "
                    f"axes={set(typed.unreduced)} and contracting spec={partitions_text(l_contract)}",
                )
            unreduced = typed.unreduced
        return result(
            "dot_general", [lhs, rhs], shape, dtype, typed.spec, unreduced=unreduced, reduced=typed.reduced
        )
    l_batch = tuple(lhs.spec[i] for i in lb)
    r_batch = tuple(rhs.spec[i] for i in rb)
    if _conflict(l_batch, r_batch):
        raise reject(
            "SH302",
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the consistent "
            f"sharding, got {partitions_text(l_batch)} and {partitions_text(r_batch)}.",
            kind="batch",
        )
    if _conflict(l_contract, r_contract):
        raise reject(
            "SH302",
            "dot_general requires contracting dimensions to have consistent sharding, got "
            f"{partitions_text(l_contract)} and {partitions_text(r_contract)}.",
            kind="contracting",
        )
    if any(a and b for a, b in zip(l_contract, r_contract, strict=True)):
        raise reject(
            "SH301",
            "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. "
            "Please specify the output sharding via the `out_sharding` parameter. Got "
            f"lhs_contracting_spec={partitions_text(l_contract)} and "
            f"rhs_contracting_spec={partitions_text(r_contract)}",
            lhs_contracting=[list(a) for a in l_contract],
            rhs_contracting=[list(a) for a in r_contract],
        )
    spec: SpecAxes = (
        l_batch
        + tuple(a for i, a in enumerate(lhs.spec) if i not in (*lc, *lb))
        + tuple(a for i, a in enumerate(rhs.spec) if i not in (*rc, *rb))
    )
    check_legal("dot_general", [lhs, rhs], shape, dtype, spec)
    _no_unreduced_operands(lhs, rhs)
    return result("dot_general", [lhs, rhs], shape, dtype, spec)


def _no_unreduced_operands(lhs: ShardedType, rhs: ShardedType) -> None:
    """`_dot_general_unreduced_rule`, which runs after the sharding rule."""
    if lhs.unreduced or rhs.unreduced:
        raise reject(
            "SH311",
            f"lhs or rhs passed to dot_general cannot be unreduced. Got lhs={short(lhs)} and rhs={short(rhs)}",
        )


def _conflict(left: SpecAxes, right: SpecAxes) -> bool:
    return any(a and b and a != b for a, b in zip(left, right, strict=True))


def _check_shapes(lhs: ShardedType, rhs: ShardedType, lc: Dims, rc: Dims, lb: Dims, rb: Dims) -> None:
    """The parts of `_dot_general_shape_rule` a well-formed call can still break."""
    if any(not 0 <= d < lhs.rank for d in (*lc, *lb)) or any(not 0 <= d < rhs.rank for d in (*rc, *rb)):
        raise ShapeError("dot_general requires dimension numbers to be nonnegative and less than the rank")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ShapeError("dot_general requires equal numbers of lhs and rhs batch/contracting dimensions")
    if tuple(lhs.shape[i] for i in lb) != tuple(rhs.shape[i] for i in rb):
        raise ShapeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape"
        )
    if tuple(lhs.shape[i] for i in lc) != tuple(rhs.shape[i] for i in rc):
        raise ShapeError("dot_general requires contracting dimensions to have the same shape")


def _finish(out: ShardedType, dtype: DType, weak: bool) -> ShardedType:
    """`lax._convert_element_type(result, preferred_element_type, output_weak_type)`."""
    return convert(out, dtype, weak)


def dot(a: ShardedType, b: ShardedType, *, out_sharding: PartitionSpec | None = None) -> ShardedType:
    """`jnp.dot(a, b)`: the last dimension of `a` with the first (vector) or second-to-last of `b`;
    the other dimensions are stacked, not broadcast."""
    a, b = promote_dtypes((a, b))
    if a.rank == 0 or b.rank == 0:
        contract: tuple[Dims, Dims] = ((), ())
    elif b.rank == 1:
        contract = ((a.rank - 1,), (0,))
    else:
        contract = ((a.rank - 1,), (b.rank - 2,))
    out = dot_general(a, b, (contract, ((), ())), out_sharding=out_sharding)
    return _finish(out, a.dtype, a.weak_type)


def matmul(a: ShardedType, b: ShardedType, *, out_sharding: PartitionSpec | None = None) -> ShardedType:
    """`a @ b` / `jnp.matmul`: batch dimensions broadcast; a dimension of size 1 unsharded on one
    side is squeezed, equal batch dimensions must be sharded alike (a ValueError otherwise)."""
    for i, x in enumerate((a, b)):
        if x.rank < 1:
            raise ShapeError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim 0", VALUE_ERROR
            )
    a, b = promote_dtypes((a, b))
    a_mat, b_mat = a.rank > 1, b.rank > 1
    a_batch = a.shape[:-2] if a_mat else ()
    b_batch = b.shape[:-2] if b_mat else ()
    n = max(len(a_batch), len(b_batch))
    a_dims: list[int | None] = [None] * (n - len(a_batch)) + list(a_batch)
    b_dims: list[int | None] = [None] * (n - len(b_batch)) + list(b_batch)
    a_specs = [()] * (n - len(a_batch)) + list(a.spec[:-2] if a_mat else ())
    b_specs = [()] * (n - len(b_batch)) + list(b.spec[:-2] if b_mat else ())
    a_squeeze: list[int] = []
    b_squeeze: list[int] = []
    both_squeeze: list[int] = []
    a_bat: list[int] = []
    b_bat: list[int] = []
    idx_batch: list[int] = []
    idx_a: list[int] = []
    idx_b: list[int] = []
    for i, (ba, bb, sa, sb) in enumerate(zip(a_dims, b_dims, a_specs, b_specs, strict=True)):
        if ba is None:
            idx_b.append(i)
        elif bb is None:
            idx_a.append(i)
        elif ba == 1 and bb == 1 and not sa and not sb:
            a_squeeze.append(len(idx_batch) + len(idx_a) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b) + len(b_squeeze))
            both_squeeze.append(i)
        elif ba == 1 and not sa:
            idx_b.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a) + len(a_squeeze))
        elif bb == 1 and not sb:
            idx_a.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b) + len(b_squeeze))
        elif ba != bb:
            raise ShapeError(
                f"Incompatible shapes for matmul arguments: {a.shape} and {b.shape}", VALUE_ERROR
            )
        elif sa == sb:
            a_bat.append(len(idx_batch) + len(idx_a))
            b_bat.append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            raise reject(
                "SH302",
                f"Incompatible types for matmul arguments: {a.jax_type} and {b.jax_type}",
                VALUE_ERROR,
                kind="batch",
            )
    if a_mat:
        idx_a.append(n)
    if b_mat:
        idx_b.append(n + a_mat)
    order = idx_batch + idx_a + idx_b
    perm = tuple(sorted(range(len(order)), key=order.__getitem__))
    a2 = squeeze(a, tuple(a_squeeze))
    b2 = squeeze(b, tuple(b_squeeze))
    rank = a2.rank + b2.rank - 2 - len(a_bat)
    if out_sharding is not None:
        check_sharding(a.mesh, out_sharding, a.dtype)  # dot_general canonicalizes it first
    if out_sharding is not None and any(e is not None for e in out_sharding.entries[rank:]):
        # jnp.matmul hands the spec of the whole result to the dot_general of the squeezed
        # operands, whose result lacks the size-1 batch dimensions: JAX fails an assertion.
        raise ShapeError(f"({rank}, {out_sharding.canonical()})", "AssertionError")
    out = dot_general(
        a2,
        b2,
        (((a2.rank - 1,), (b2.rank - 1 - b_mat,)), (tuple(a_bat), tuple(b_bat))),
        out_sharding=out_sharding,
    )
    out = transpose(out, perm)
    if both_squeeze:
        out = expand_dims(out, tuple(both_squeeze))
    return _finish(out, a.dtype, a.weak_type)


def einsum(
    subscripts: str, lhs: ShardedType, rhs: ShardedType, *, out_sharding: PartitionSpec | None = None
) -> ShardedType:
    """Two-operand `jnp.einsum` with explicit output (`"bij,jk->bik"`) and no index repeated
    within an operand: indices only one side has are summed first, size-1 dimensions the other
    side lacks are squeezed, then one dot_general (operands swapped when that gives the output
    order directly) and a transpose."""
    inputs, result_names = subscripts.replace(" ", "").split("->")
    lhs_names, rhs_names = inputs.split(",")
    if len(lhs_names) != lhs.rank or len(rhs_names) != rhs.rank:
        raise ShapeError(
            f"einsum {subscripts!r} does not fit operands of ranks {lhs.rank} and {rhs.rank}", VALUE_ERROR
        )
    lhs, rhs = promote_dtypes((lhs, rhs))
    dtype, weak = lhs.dtype, lhs.weak_type
    # opt_einsum's path for two operands is ((1, 0), "rhs,lhs->out"): jnp contracts them swapped.
    lhs, rhs, lhs_names, rhs_names = rhs, lhs, rhs_names, lhs_names
    contracted = sorted((set(lhs_names) | set(rhs_names)) - set(result_names))
    lhs, lhs_names = _filter_singletons(lhs, lhs_names, rhs, rhs_names)
    rhs, rhs_names = _filter_singletons(rhs, rhs_names, lhs, lhs_names)
    lhs_uniques = [c for c in contracted if c in lhs_names and c not in rhs_names]
    rhs_uniques = [c for c in contracted if c in rhs_names and c not in lhs_names]
    lhs, lhs_names = _sum_uniques(lhs, lhs_names, lhs_uniques)
    rhs, rhs_names = _sum_uniques(rhs, rhs_names, rhs_uniques)
    contracted = [c for c in contracted if c in lhs_names or c in rhs_names]
    batch = [c for c in result_names if c in lhs_names and c in rhs_names]
    lb = tuple(lhs_names.index(c) for c in batch)
    rb = tuple(rhs_names.index(c) for c in batch)
    lc = tuple(lhs_names.index(c) for c in contracted)
    rc = tuple(rhs_names.index(c) for c in contracted)
    gone = set(batch) | set(contracted)
    rest_l = "".join(c for c in lhs_names if c not in gone)
    rest_r = "".join(c for c in rhs_names if c not in gone)
    names = "".join(batch) + rest_r + rest_l
    if names == result_names:
        out = dot_general(
            rhs, lhs, ((rc, lc), (rb, lb)), out_sharding=out_sharding, preferred_element_type=dtype
        )
    else:
        names = "".join(batch) + rest_l + rest_r
        inner = out_sharding
        if out_sharding is not None and names != result_names:
            padded = out_sharding.padded(len(result_names))
            inner = PartitionSpec.of(
                *(padded[result_names.index(c)] for c in names),
                unreduced=out_sharding.unreduced,
                reduced=out_sharding.reduced,
            )
        out = dot_general(lhs, rhs, ((lc, rc), (lb, rb)), out_sharding=inner, preferred_element_type=dtype)
    if names != result_names:
        out = transpose(out, tuple(names.index(c) for c in result_names))
    return _finish(out, dtype, weak)


def _filter_singletons(
    x: ShardedType, names: str, other: ShardedType, other_names: str
) -> tuple[ShardedType, str]:
    keep = [
        x.shape[i] != 1 or other_names.find(c) == -1 or other.shape[other_names.find(c)] == 1
        for i, c in enumerate(names)
    ]
    dropped = tuple(i for i, k in enumerate(keep) if not k)
    return squeeze(x, dropped), "".join(c for c, k in zip(names, keep, strict=True) if k)


def _sum_uniques(x: ShardedType, names: str, uniques: list[str]) -> tuple[ShardedType, str]:
    if not uniques:
        return x, names
    axes = tuple(names.index(c) for c in uniques)
    return reduce_generic(x, axes), "".join(c for c in names if c not in uniques)
