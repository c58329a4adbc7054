"""Mesh constructors and device lists: `make_mesh`, `Mesh`, `AbstractMesh`, `create_device_mesh`,
`np.array(jax.devices()).reshape(...)`, and the attributes of a mesh."""

from __future__ import annotations

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import axis_types_of
from shardls.analysis.library.registry import attributes, calls, methods, subscripts
from shardls.analysis.values import (
    BoundMethod,
    Const,
    DevicesV,
    DictV,
    MeshV,
    Seq,
    Unknown,
    Value,
    as_int,
    as_str,
)
from shardls.core import FILL, Mesh, MeshConstructor

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


@calls("jax.process_count")
def _process_count(call: CallArgs) -> Value | None:
    return Unknown("process count", symbol="process_count")


@calls("numpy.array", "numpy.asarray", "jax.numpy.array", "jax.numpy.asarray")
def _device_array(call: CallArgs) -> Value | None:
    devices = call.get(0, "object", "a")
    return devices if isinstance(devices, DevicesV) else None


@calls("jax.experimental.mesh_utils.create_device_mesh")
def _create_device_mesh(call: CallArgs) -> Value | None:
    shape = _sizes(call.get(0, "mesh_shape"))
    if shape is None:
        return None
    devices = call.get(1, "devices")
    count = devices.count if isinstance(devices, DevicesV) else call.library.environment.device_count
    return DevicesV(count, shape, MeshConstructor.CREATE_DEVICE_MESH)


@methods(DevicesV, "reshape")
def _reshape(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, DevicesV)
    values = call.args[0].items if len(call.args) == 1 and isinstance(call.args[0], Seq) else tuple(call.args)
    shape = _sizes(Seq(values))
    if shape is None:
        return None
    return DevicesV(method.base.count, shape, MeshConstructor.RESHAPE)


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
    if constructor is MeshConstructor.MESH:
        devices = call.get(0, "devices")
        names = _names(call.get(1, "axis_names"))
        if not isinstance(devices, DevicesV) or names is None:
            return None
        sizes = devices.shape
        if sizes is None:
            count = as_int(devices.count)
            sizes = (count,) if count is not None else (FILL,)
        constructor = devices.made_by
    else:
        names = _names(call.get(1, "axis_names"))
        sizes = _sizes(call.get(0, "axis_shapes", "axis_sizes", "shape"))
        if names is None or sizes is None:
            return None
    devices = call.get(0, "devices") if constructor is not MeshConstructor.MAKE_MESH else None
    assumptions = _assumptions(call, sizes, devices)
    axis_types = axis_types_of(call.get(2, "axis_types"), len(names))
    mesh = Mesh(names, sizes, axis_types or (), constructor)
    return MeshV(mesh, call.frame.span(call.node), call.frame.module.path, assumptions)


def _assumptions(call: CallArgs, sizes: tuple[int, ...], devices: Value | None) -> tuple[str, ...]:
    """The device count matters to this mesh when its sizes come from the device list."""
    count = call.library.environment.device_count
    origin = count.origin
    uses_count = isinstance(devices, DevicesV) and devices.count is count
    if origin is not None and origin.assumed and uses_count and FILL not in sizes:
        return (f"{count.value!s} devices ({origin.text})",)
    return ()


def _names(value: Value | None) -> tuple[str, ...] | None:
    single = as_str(value) if value is not None else None
    if single is not None:
        return (single,)
    if isinstance(value, Seq):
        names = tuple(as_str(item) for item in value.items)
        if all(n is not None for n in names):
            return tuple(n for n in names if n is not None)
    return None


def _sizes(value: Value | None) -> tuple[int, ...] | None:
    """Mesh sizes; one unknown size becomes -1 (fill the remaining devices), as config meshes do."""
    if not isinstance(value, Seq):
        single = as_int(value) if value is not None else None
        return (single,) if single is not None else None
    sizes = [as_int(item) for item in value.items]
    if sum(1 for s in sizes if s is None) > 1:
        return None
    return tuple(FILL if s is None else s for s in sizes)


@attributes
def _mesh_attributes(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if not isinstance(base, MeshV):
        return None
    mesh = base.mesh
    if attr == "shape":
        return DictV(tuple(Const(n) for n in mesh.axis_names), tuple(Const(s) for s in mesh.axis_sizes))
    if attr == "axis_names":
        return Seq(tuple(Const(n) for n in mesh.axis_names))
    if attr in ("axis_sizes", "shape_tuple", "devices_shape"):
        return Seq(tuple(Const(s) for s in mesh.axis_sizes))
    if attr == "size":
        return Const(mesh.size) if mesh.is_resolved else Unknown("mesh size")
    if attr == "devices":
        return DevicesV(Const(mesh.size), tuple(mesh.axis_sizes), MeshConstructor.RESHAPE)
    if attr == "abstract_mesh":
        return base
    return None
