"""The sharded type of an array, as JAX's sharding-in-types keeps it: shape, dtype, per-dimension
mesh axes, and the unreduced/reduced axes.

In an aval JAX keeps only the mesh's Explicit axes (`core.modify_spec_for_auto_manual`): an Auto
axis in a spec is dropped from the type, because where the data lies along it is the compiler's
choice. `ShardedType` does the same and says so (`compiler_chosen_axes`), so a rendering never
invents a layout for those axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from shardls.core.context import UsageContext
from shardls.core.dtypes import DType
from shardls.core.layout import Layout, compute_layout
from shardls.core.mesh import AxisType, Mesh
from shardls.core.spec import PartitionSpec, entry_axes

DimAxes = tuple[str, ...]
"""The mesh axes one dimension is split over, most significant first; () is unsplit."""

SpecAxes = tuple[DimAxes, ...]


@dataclass(frozen=True)
class ShardedType:
    """What `jax.typeof(x)` says about an array traced on `mesh` (the context mesh of the trace).

    `spec` names Explicit axes only, one tuple per dimension. `weak_type` is JAX's flag for values
    that came from Python scalars: it changes dtype promotion, never the sharding.
    """

    shape: tuple[int, ...]
    dtype: DType
    mesh: Mesh
    spec: SpecAxes
    unreduced: frozenset[str] = frozenset()
    reduced: frozenset[str] = frozenset()
    weak_type: bool = False
    varying: frozenset[str] = frozenset()
    """Inside a `shard_map` body: the Manual axes along which the value may differ from device to
    device (JAX's vma, printed `{V:X}`). Empty everywhere else."""

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def jax_type(self) -> str:
        """JAX's notation, identical to `str(jax.typeof(x))`: `float32[8@X,16@(Y,Z)]{U:W}` (`~` marks a
        weak type)."""
        weak = "~" if self.weak_type else ""
        return weak + format_type(
            self.dtype.name, self.shape, self.spec, self.mesh, self.unreduced, self.reduced, self.varying
        )

    @property
    def compiler_chosen_axes(self) -> tuple[str, ...]:
        """Mesh axes (Auto) along which the compiler decides where the data lies: unknown here."""
        return tuple(
            n for n, t in zip(self.mesh.axis_names, self.mesh.axis_types, strict=True) if t is AxisType.AUTO
        )

    @property
    def manual_axes(self) -> tuple[str, ...]:
        """Mesh axes that are Manual where the array lives: a shard_map body's."""
        return tuple(
            n for n, t in zip(self.mesh.axis_names, self.mesh.axis_types, strict=True) if t is AxisType.MANUAL
        )

    @property
    def partition_spec(self) -> PartitionSpec:
        return PartitionSpec.of(*self.spec, unreduced=self.unreduced, reduced=self.reduced)

    def layout(self) -> Layout | None:
        """The exact per-device layout, or None when part of it is the compiler's choice (Auto
        axes), pending a reduction (unreduced axes hold partial sums, not copies), or the type
        is already one device's block (inside a shard_map body, where the Manual axes split
        nothing the type shows and devices along a varying axis hold different data)."""
        if self.compiler_chosen_axes or self.unreduced or self.manual_axes:
            return None
        return compute_layout(self.mesh, PartitionSpec.of(*self.spec), self.shape, self.dtype)

    def with_spec(
        self,
        spec: SpecAxes,
        *,
        shape: tuple[int, ...] | None = None,
        unreduced: frozenset[str] | None = None,
        reduced: frozenset[str] | None = None,
    ) -> ShardedType:
        return replace(
            self,
            spec=spec,
            shape=self.shape if shape is None else shape,
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    def dim_factor(self, dim: int) -> int:
        return axes_size(self.mesh, self.spec[dim])


def axes_size(mesh: Mesh, axes: DimAxes) -> int:
    return math.prod(mesh.sizes_by_name[a] for a in axes)


def format_type(
    dtype: str,
    shape: tuple[int, ...],
    spec: SpecAxes,
    mesh: Mesh,
    unreduced: frozenset[str] = frozenset(),
    reduced: frozenset[str] = frozenset(),
    varying: frozenset[str] = frozenset(),
) -> str:
    """`core.str_short_aval`: dims as `n`, `n@X` or `n@(X,Y)`, then `{V:..., U:..., R:...}` in mesh
    order."""
    dims = []
    for n, axes in zip(shape, spec, strict=True):
        if not axes:
            dims.append(str(n))
        elif len(axes) == 1:
            dims.append(f"{n}@{axes[0]}")
        else:
            dims.append(f"{n}@({','.join(axes)})")
    marks = [
        f"{prefix}:{_axes_text(mesh, axes)}"
        for prefix, axes in (("V", varying), ("U", unreduced), ("R", reduced))
        if axes
    ]
    suffix = "{" + ", ".join(marks) + "}" if marks else ""
    return f"{dtype}[{','.join(dims)}]{suffix}"


def _axes_text(mesh: Mesh, axes: frozenset[str]) -> str:
    ordered = [a for a in mesh.axis_names if a in axes]
    return ordered[0] if len(ordered) == 1 else "(" + ",".join(ordered) + ")"


def explicit_spec(mesh: Mesh, spec: PartitionSpec, rank: int) -> SpecAxes:
    """The spec as the type keeps it: Explicit axes only, one entry per dimension.

    Raises nothing: the caller checked the spec itself (`compute_layout`)."""
    explicit = {n for n, t in mesh.types_by_name.items() if t is AxisType.EXPLICIT}
    return tuple(
        tuple(a for a in entry_axes(entry) if isinstance(a, str) and a in explicit)
        for entry in spec.padded(rank)
    )


def type_of_layout(layout: Layout, *, weak_type: bool = False) -> ShardedType:
    """The type `jax.device_put(x, NamedSharding(mesh, spec))` (or a jit argument) gets.

    `layout` must be valid; Auto axes leave the type (their placement stays the compiler's)."""
    mesh, spec = layout.mesh, layout.spec
    explicit = {n for n, t in mesh.types_by_name.items() if t is AxisType.EXPLICIT}
    return ShardedType(
        layout.global_shape,
        layout.dtype,
        mesh,
        explicit_spec(mesh, spec, len(layout.global_shape)),
        spec.unreduced & explicit,
        spec.reduced & explicit,
        weak_type,
    )


def placed(
    mesh: Mesh,
    spec: PartitionSpec,
    shape: tuple[int, ...],
    dtype: DType,
    context: UsageContext = UsageContext.DEVICE_PUT,
) -> ShardedType | Layout:
    """The type of an array placed by `spec`, or the invalid Layout whose problems say why not."""
    layout = compute_layout(mesh, spec, shape, dtype, context)
    return type_of_layout(layout) if layout.is_valid else layout
