"""`jax.jit(f, in_shardings=..., out_shardings=...)` called eagerly on typed arrays.

What JAX 0.10 does (run on 8 fake CPU devices; docs/sharding-types.md records the cases):

- The body is traced with each argument's own type, whatever `in_shardings` says. A committed
  array (every array with a type is one) whose sharding is not *equivalent* to its in_sharding is
  then refused at the call: `ValueError: Sharding passed to jit does not match the sharding on the
  respective arg`. Equivalent means the same device-to-block map, so `P('X', None)` matches
  `P('X')`, and an axis of size 1 is the same as none. A numpy argument or a Python scalar is
  never refused; it is not typed here either.
- Each result takes its out_sharding's type (`jax.typeof` gives the spec's Explicit axes), from
  any sharding the body left it with: XLA reshards, reducing unreduced axes if needed.
- Inside another trace neither applies: the inner jit is inlined, its argument is not checked and
  its result keeps the body's type.
"""

from __future__ import annotations

from shardls.core.context import UsageContext
from shardls.core.layout import Layout
from shardls.core.mesh import AxisType, Mesh
from shardls.core.spec import PartitionSpec
from shardls.core.typing.errors import VALUE_ERROR, reject
from shardls.core.typing.types import DimAxes, ShardedType, placed


def jit_argument(arg: ShardedType, spec: PartitionSpec) -> ShardedType | None:
    """The type the body sees for a typed argument whose in_sharding is `spec` on the argument's
    mesh: its own. Raises TypeRejected (SH320) when JAX refuses the argument; None when the
    in_sharding is itself invalid for the argument (its layout's problems are reported where it
    is written) or when whether it matches depends on where the data lies along Auto axes."""
    mesh = arg.mesh
    layout = placed(mesh, spec, arg.shape, arg.dtype, UsageContext.JIT)
    if isinstance(layout, Layout):
        return None
    if _blocks(mesh, layout) == _blocks(mesh, arg):
        return arg if all(t is AxisType.EXPLICIT for t in mesh.axis_types) else None
    raise reject(
        "SH320",
        "Sharding passed to jit does not match the sharding on the respective arg. Got jit sharding: "
        f"{_named_sharding(mesh, spec.canonical())}, arg sharding: "
        f"{_named_sharding(mesh, _spec_repr(arg))} for arg type: {arg.jax_type}",
        VALUE_ERROR,
        jit_spec=spec.canonical(),
        arg_type=arg.jax_type,
    )


def _blocks(mesh: Mesh, t: ShardedType) -> tuple[tuple[DimAxes, ...], frozenset[str], frozenset[str]]:
    """What decides which block each device holds: the axes of each dimension that split it
    (an axis of size 1 splits nothing), and the unreduced and reduced axes."""
    sizes = mesh.sizes_by_name
    spec = tuple(tuple(a for a in axes if sizes[a] != 1) for axes in t.spec)
    return (
        spec,
        frozenset(a for a in t.unreduced if sizes[a] != 1),
        frozenset(a for a in t.reduced if sizes[a] != 1),
    )


def _mesh_repr(mesh: Mesh) -> str:
    """`Mesh.__repr__`: `Mesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit))`."""
    sizes = ", ".join(f"'{n}': {s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    types = tuple(t.value for t in mesh.axis_types)
    kinds = "(" + ", ".join(types) + ("," if len(types) == 1 else "") + ")"
    return f"Mesh({sizes}, axis_types={kinds})"


def _named_sharding(mesh: Mesh, spec: str) -> str:
    return f"NamedSharding(mesh={_mesh_repr(mesh)}, spec={spec}, memory_kind=device)"


def _spec_repr(t: ShardedType) -> str:
    entries = [None if not axes else axes[0] if len(axes) == 1 else axes for axes in t.spec]
    return PartitionSpec.of(*entries, unreduced=t.unreduced, reduced=t.reduced).canonical()
