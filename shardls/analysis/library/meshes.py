"""Mesh constructors and device lists: `make_mesh`, `Mesh`, `AbstractMesh`, `create_device_mesh`,
`np.array(jax.devices()).reshape(...)`, and the attributes of a mesh."""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import axis_types_of
from shardls.analysis.library.registry import attributes, calls, methods, subscripts
from shardls.analysis.values import (
    BoundMethod,
    Const,
    DevicesV,
    DictV,
    MeshV,
    Origin,
    Seq,
    SpecV,
    Unknown,
    UnknownInt,
    Value,
    as_int,
    as_str,
    assumption_of,
)
from shardls.core import FILL, Mesh, MeshConstructor, Problem, Severity

_CONSTRUCTORS = {
    "jax.make_mesh": MeshConstructor.MAKE_MESH,
    "jax.sharding.Mesh": MeshConstructor.MESH,
    "jax.sharding.AbstractMesh": MeshConstructor.ABSTRACT_MESH,
}


@calls("jax.devices", "jax.local_devices")
def _devices(call: CallArgs) -> Value | None:
    return DevicesV(call.library.environment.device_count)


@calls("jax.device_count", "jax.local_device_count")
def _device_count(call: CallArgs) -> Value | None:
    return call.library.environment.device_count


@calls("jax.process_count", "jax.process_index")
def _process_count(call: CallArgs) -> Value | None:
    """An int known only when the program runs (`jnp.ones(jax.process_index() + 1)` is 1-D)."""
    name = call.qualname.rsplit(".", 1)[-1]
    return UnknownInt(name.replace("_", " "), symbol=name)


@calls("jax.experimental.mesh_utils.create_device_mesh")
def _create_device_mesh(call: CallArgs) -> Value | None:
    problems: list[Problem] = []
    read = _sizes(call.get(0, "mesh_shape"), call.qualname, problems)
    if read is None:
        return None
    devices = call.get(1, "devices")
    count = devices.count if isinstance(devices, DevicesV) else call.library.environment.device_count
    return DevicesV(count, read.sizes, MeshConstructor.CREATE_DEVICE_MESH, tuple(problems), read.assumptions)


@methods(DevicesV, "reshape")
def _reshape(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`devices.reshape(shape)`: a single argument that is not a known tuple may be a tuple of any
    length (`reshape(mesh_shape)`), so the mesh's rank stays unknown rather than becoming 1."""
    assert isinstance(method.base, DevicesV)
    if len(call.args) == 1 and not isinstance(call.args[0], Seq) and as_int(call.args[0]) is None:
        return None
    values = call.args[0].items if len(call.args) == 1 and isinstance(call.args[0], Seq) else tuple(call.args)
    read = _sizes(Seq(values), "reshape", [], fills=True)
    if read is None:
        return None
    return DevicesV(method.base.count, read.sizes, MeshConstructor.RESHAPE, (), read.assumptions)


@subscripts
def _slice_devices(base: Value, index: Value | slice) -> Value | None:
    if not isinstance(base, DevicesV) or not isinstance(index, slice) or base.shape is not None:
        return None
    count = as_int(base.count)
    if count is None:
        return None
    return DevicesV(Const(len(range(count)[index]), origin=base.count.origin), None, MeshConstructor.MESH)


@calls(*_CONSTRUCTORS)
def _mesh(call: CallArgs) -> Value | None:
    constructor = _CONSTRUCTORS[call.qualname]
    names = _names(call.get(1, "axis_names"))
    problems: list[Problem] = []
    visible = None
    read_assumptions: tuple[str, ...] = ()
    in_branch = None
    if constructor is MeshConstructor.MESH:
        devices = call.get(0, "devices")
        if not isinstance(devices, DevicesV) or names is None:
            return None
        visible = as_int(devices.count)
        sizes = devices.shape or ((visible,) if visible is not None else (FILL,))
        constructor = devices.made_by
        problems.extend(devices.problems)
        counted = assumption_of(devices.count) if devices.shape is None else None
        read_assumptions = devices.assumptions + ((counted,) if counted else ())
    else:
        devices = call.get(None, "devices")
        read = _sizes(call.get(0, "axis_shapes", "axis_sizes", "shape"), call.qualname, problems)
        if names is None or read is None:
            return None
        sizes, read_assumptions = read.sizes, read.assumptions
        if isinstance(devices, DevicesV):
            visible = as_int(devices.count)
        elif isinstance(devices, Seq):  # `devices=[jax.devices()[0]]`: as many as listed
            visible = len(devices.items)
        elif call.library.environment.stated_in_branch:  # the devices the branch's test states
            visible = as_int(call.library.environment.device_count)
            in_branch = assumption_of(call.library.environment.device_count)  # one of several counts
    axis_types = axis_types_of(call.get(2, "axis_types"))
    mesh = Mesh(names, sizes, axis_types or (), constructor)
    span = call.frame.span(call.node)
    return MeshV(
        mesh,
        span,
        call.frame.module.path,
        tuple(dict.fromkeys(read_assumptions)),
        _device_notes(call, sizes, devices),
        problems=tuple(problems),
        device_count=visible,
        count_assumption=assumption_of(devices.count) if isinstance(devices, DevicesV) else in_branch,
        runs_elsewhere=call.library.environment.runs_elsewhere,
    )


def _device_notes(call: CallArgs, sizes: tuple[int, ...], devices: Value | None) -> tuple[str, ...]:
    """The device count matters to this mesh when it is built from the device list: worth
    showing, though sizes written in the code do not rest on it."""
    count = call.library.environment.device_count
    uses_count = isinstance(devices, DevicesV) and devices.count is count
    if count.origin is not None and uses_count and FILL not in sizes:
        return (f"{count.value!s} devices ({count.origin.text})",)
    return ()


def _names(value: Value | None) -> tuple[str, ...] | None:
    """Axis names as JAX reads them: one string, or any iterable of strings, a `P('x', 'y')`
    included (real code writes `jax.make_mesh((n,), P('x'))`, and JAX iterates it)."""
    single = as_str(value) if value is not None else None
    if single is not None:
        return (single,)
    if isinstance(value, SpecV) and not value.unknown_entries:
        entries = value.spec.entries
        if not value.spec.unreduced and not value.spec.reduced and all(isinstance(e, str) for e in entries):
            return tuple(e for e in entries if isinstance(e, str))
    if isinstance(value, Seq):
        names = tuple(as_str(item) for item in value.items)
        if all(n is not None for n in names):
            return tuple(n for n in names if n is not None)
    return None


@dataclass(frozen=True)
class _Sizes:
    sizes: tuple[int, ...]
    assumptions: tuple[str, ...]
    """Sizes that rest on an assumption: one not known here (filled from the devices), or one
    computed from the default device count."""


def _sizes(value: Value | None, qualname: str, problems: list[Problem], fills: bool = False) -> _Sizes | None:
    """Mesh sizes as JAX reads them.

    A size that cannot be known (a config value, a flag) becomes -1, filled from the device
    count, as config-driven meshes intend; that is an assumption, never a fact to report an error
    on. A literal -1 is different: only numpy's reshape fills it; `make_mesh`,
    `create_device_mesh` and `AbstractMesh` reject it. Floats are truncated silently by JAX,
    which is worth a word.
    """
    if isinstance(value, Seq):
        items = value.items
    elif isinstance(value, Const):
        items = (value,)
    else:  # an unknown tuple (a parameter, a config value) has an unknown number of sizes
        return None
    sizes: list[int] = []
    assumptions: list[str] = []
    unknown = 0
    where = qualname.rsplit(".", 1)[-1]
    for index, item in enumerate(items):
        assumption = assumption_of(item)
        if assumption is not None:
            assumptions.append(assumption)
        size = as_int(item)
        # A size read from a flag's or config's default is what this run would get, not a fact.
        rests_on = {"assumptions": (assumption,)} if assumption is not None else {}
        if isinstance(item, Const) and isinstance(item.value, float):
            size = int(item.value)
            problems.append(
                Problem(
                    "SH103",
                    Severity.ERROR,
                    f"{where} truncates the float size {item.value} to {size}",
                    rests_on,
                )
            )
        if size == FILL and not fills:
            problems.append(
                Problem(
                    "SH103",
                    Severity.ERROR,
                    f"{where} does not fill a -1 size (only numpy's reshape does); "
                    "give the size, e.g. from jax.device_count()",
                    rests_on,
                )
            )
        if size is None:
            unknown += 1
            size = FILL
            reason = f" ({item.reason})" if isinstance(item, Unknown) else ""
            assumptions.append(
                f"mesh size {index} is not known here{reason}; assumed to take the remaining devices"
            )
        sizes.append(size)
    # One unknown size may take the remaining devices; beside another, or beside a -1 the code
    # writes (`reshape(n, -1)`, n unknown), nothing is left to know the sizes by.
    if unknown > 1 or (unknown and sizes.count(FILL) > 1):
        return None
    return _Sizes(tuple(sizes), tuple(dict.fromkeys(assumptions)))


@attributes(DevicesV, MeshV)
def _mesh_attributes(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if isinstance(base, DevicesV) and attr == "size" and base.shape is None:
        return base.count  # `np.array(jax.devices()).size`
    if not isinstance(base, MeshV):
        return None
    mesh = base.mesh
    # A mesh whose sizes rest on an assumption (the default device count, a size filled from the
    # devices) passes it on to the numbers read from it: `x.shape[0] == mesh.size` decides nothing.
    origin = Origin("a size of this mesh", assumption=base.assumptions[0]) if base.assumptions else None
    if attr == "shape":
        sizes = tuple(Const(s, origin=origin) for s in mesh.axis_sizes)
        return DictV(tuple(Const(n) for n in mesh.axis_names), sizes)
    if attr == "axis_names":
        return Seq(tuple(Const(n) for n in mesh.axis_names))
    if attr in ("axis_sizes", "shape_tuple", "devices_shape"):
        return Seq(tuple(Const(s, origin=origin) for s in mesh.axis_sizes))
    if attr == "size":
        return Const(mesh.size, origin=origin) if mesh.is_resolved else Unknown("mesh size")
    if attr == "devices":
        return DevicesV(Const(mesh.size, origin=origin), tuple(mesh.axis_sizes), MeshConstructor.RESHAPE)
    if attr == "abstract_mesh":
        return base
    return None
