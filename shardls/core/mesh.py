"""Device meshes: named axes with sizes and types, and the problems JAX's constructors have with them.

A mesh may be known only partly when it comes from source code: a `-1` size waits for a device
count, and the constructor decides how that count is checked (reference §3.1-3.2).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from shardls.core.problems import Problem, Severity

FILL = -1
"""A mesh size of -1: 'the rest of the devices' (numpy reshape and config-driven meshes)."""


class AxisType(enum.Enum):
    AUTO = "Auto"
    EXPLICIT = "Explicit"
    MANUAL = "Manual"


class MeshConstructor(enum.Enum):
    """How the mesh was built; each checks the device count differently."""

    MAKE_MESH = "make_mesh"
    MESH = "Mesh"
    CREATE_DEVICE_MESH = "create_device_mesh"
    RESHAPE = "reshape"
    ABSTRACT_MESH = "AbstractMesh"

    @property
    def default_axis_type(self) -> AxisType:
        """make_mesh defaults to Explicit; Mesh and AbstractMesh (jax 0.10) to Auto."""
        return AxisType.EXPLICIT if self is MeshConstructor.MAKE_MESH else AxisType.AUTO


@dataclass(frozen=True)
class Mesh:
    """An ordered mapping of axis names to sizes.

    `device_ids` is the flattened (row-major) device array when the code permutes devices;
    None means devices 0..N-1 in order.
    """

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[AxisType, ...] = ()
    constructor: MeshConstructor | None = None
    device_ids: tuple[int, ...] | None = None
    sizes_by_name: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)
    types_by_name: dict[str, AxisType] = field(init=False, repr=False, compare=False, hash=False)
    well_formed: bool = field(init=False, repr=False, compare=False, hash=False)
    """Unique names, one size and one type per name, every size resolved: the calculator's fast path."""
    mixed_types: bool = field(init=False, repr=False, compare=False, hash=False)
    _hash: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.axis_types:
            default = (self.constructor or MeshConstructor.MESH).default_axis_type
            object.__setattr__(self, "axis_types", (default,) * len(self.axis_names))
        sizes = dict(zip(self.axis_names, self.axis_sizes, strict=False))
        object.__setattr__(self, "sizes_by_name", sizes)
        object.__setattr__(self, "types_by_name", dict(zip(self.axis_names, self.axis_types, strict=False)))
        well_formed = len(sizes) == len(self.axis_names) == len(self.axis_sizes) == len(
            self.axis_types
        ) and all(size >= 1 for size in self.axis_sizes)
        object.__setattr__(self, "well_formed", well_formed)
        object.__setattr__(self, "mixed_types", len(set(self.axis_types)) > 1)
        key = (self.axis_names, self.axis_sizes, self.axis_types, self.constructor, self.device_ids)
        object.__setattr__(self, "_hash", hash(key))

    def __hash__(self) -> int:
        """Hashed once: meshes key the calculator's memo, and hashing enums field by field is slow."""
        return self._hash

    @classmethod
    def of(cls, axes: dict[str, int], axis_type: AxisType = AxisType.AUTO) -> Mesh:
        """A convenience for tests and callers that think of a mesh as `{name: size}`."""
        return cls(tuple(axes), tuple(axes.values()), (axis_type,) * len(axes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def is_resolved(self) -> bool:
        return all(size >= 1 for size in self.axis_sizes)

    @property
    def has_auto_axis(self) -> bool:
        return AxisType.AUTO in self.axis_types

    def device_id(self, flat_index: int) -> int:
        return flat_index if self.device_ids is None else self.device_ids[flat_index]

    def describe(self) -> str:
        """`data=2, model=4` - the way users write a mesh on the command line."""
        return ", ".join(
            f"{name}={size}" for name, size in zip(self.axis_names, self.axis_sizes, strict=False)
        )


def resolve_mesh(mesh: Mesh, device_count: int | None) -> tuple[Mesh, list[Problem]]:
    """Fill a `-1` size from the device count and report every problem JAX's constructor would have.

    Returns the mesh with its fill size resolved when possible (otherwise unchanged) and the
    problems in the order a user should fix them.
    """
    problems = _structure_problems(mesh)
    fills = [i for i, size in enumerate(mesh.axis_sizes) if size == FILL]
    sizes = list(mesh.axis_sizes)
    if len(fills) > 1:
        problems.append(
            Problem(
                "SH109",
                Severity.ERROR,
                f"only one mesh size can be -1, but {len(fills)} are: {mesh.describe()}",
                {"fill_axes": [mesh.axis_names[i] for i in fills if i < len(mesh.axis_names)]},
            )
        )
    elif fills and device_count is not None:
        rest = math.prod(size for size in sizes if size != FILL)
        if rest >= 1 and device_count % rest == 0:
            sizes[fills[0]] = device_count // rest
        elif rest >= 1:
            problems.append(
                Problem(
                    "SH106",
                    Severity.ERROR,
                    f"cannot fill the -1 mesh axis: {device_count} devices are not divisible "
                    f"by the other axes' product {rest}",
                    {"device_count": device_count, "product": rest},
                )
            )
    resolved = Mesh(mesh.axis_names, tuple(sizes), mesh.axis_types, mesh.constructor, mesh.device_ids)
    if device_count is not None and resolved.is_resolved and not any(p.is_error for p in problems):
        problems.extend(_device_count_problems(resolved, device_count))
    return resolved, problems


def _structure_problems(mesh: Mesh) -> list[Problem]:
    problems: list[Problem] = []
    if len(mesh.axis_names) != len(mesh.axis_sizes):
        problems.append(
            Problem(
                "SH102",
                Severity.ERROR,
                f"the mesh has {len(mesh.axis_sizes)} axis sizes {tuple(mesh.axis_sizes)} but "
                f"{len(mesh.axis_names)} axis names {tuple(mesh.axis_names)}"
                + (" (a string is one name)" if len(mesh.axis_names) == 1 else ""),
                {"sizes": list(mesh.axis_sizes), "names": list(mesh.axis_names)},
            )
        )
    if len(mesh.axis_types) != len(mesh.axis_names):
        problems.append(
            Problem(
                "SH108",
                Severity.ERROR,
                f"{len(mesh.axis_types)} axis types for {len(mesh.axis_names)} axis names "
                f"{tuple(mesh.axis_names)}",
                {"types": len(mesh.axis_types), "names": len(mesh.axis_names)},
            )
        )
    seen: set[str] = set()
    for name in mesh.axis_names:
        if name in seen:
            problems.append(
                Problem(
                    "SH101",
                    Severity.ERROR,
                    f"mesh axis name {name!r} is used twice; JAX accepts the mesh but every "
                    "sharding on it fails later with an obscure INVALID_ARGUMENT error",
                    {"axis": name},
                )
            )
        seen.add(name)
    for name, size in zip(mesh.axis_names, mesh.axis_sizes, strict=False):
        if size != FILL and size < 1:
            problems.append(
                Problem(
                    "SH103",
                    Severity.ERROR,
                    f"mesh axis {name!r} has size {size}; sizes must be at least 1",
                    {"axis": name, "size": size},
                )
            )
    return problems


def _device_count_problems(mesh: Mesh, device_count: int) -> list[Problem]:
    product = mesh.size
    data = {"product": product, "device_count": device_count}
    shape = tuple(mesh.axis_sizes)
    if mesh.constructor in (MeshConstructor.CREATE_DEVICE_MESH, MeshConstructor.RESHAPE):
        if product != device_count:
            devices = f"{product} device{'s' if product != 1 else ''}"
            message = (
                f"create_device_mesh({shape}) needs as many devices as the product of the shape, "
                f"{devices}, but it is given {device_count}"
                if mesh.constructor is MeshConstructor.CREATE_DEVICE_MESH
                else f"cannot reshape {device_count} devices into shape {shape}, which holds {devices}"
            )
            return [Problem("SH105", Severity.ERROR, message, data)]
        return []
    if mesh.constructor is MeshConstructor.ABSTRACT_MESH:
        return []
    if product > device_count:
        return [
            Problem(
                "SH104",
                Severity.ERROR,
                f"the mesh {mesh.describe()} needs {product} devices, but only {device_count} are available",
                data,
            )
        ]
    if product < device_count and mesh.constructor is MeshConstructor.MAKE_MESH:
        return [
            Problem(
                "SH107",
                Severity.INFO,
                f"make_mesh uses only the first {product} of {device_count} devices",
                data,
            )
        ]
    return []
