"""What one file is analysed with, from its pragmas and the settings: the device count (and
whether it is only assumed), the environment the library models JAX with, and the mesh assumed
where the code builds none."""

from __future__ import annotations

from shardls.analysis.facts import DeviceCount, MeshFact
from shardls.analysis.library import Environment
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.settings import DEFAULT_COUNT_SOURCE, DEFAULT_DEVICE_COUNT, Settings
from shardls.analysis.values import Const, Origin
from shardls.core import parse_dtype


def file_device_count(pragmas: Pragmas, settings: Settings) -> DeviceCount:
    """The devices to assume: the file's `# shardls: device-count=N`, else the count its code
    gives XLA_FLAGS or jax_num_cpu_devices, else the setting, else the default (an assumption
    each layout that depends on it states)."""
    if pragmas.device_count is not None:
        count, line = pragmas.device_count
        return DeviceCount(count, f"pragma at line {line + 1}")
    if pragmas.device_hint is not None:
        count, line, what = pragmas.device_hint
        return DeviceCount(count, f"{what} at line {line + 1}")
    if settings.device_count is not None:
        return DeviceCount(settings.device_count, settings.device_count_source)
    return DeviceCount(DEFAULT_DEVICE_COUNT, DEFAULT_COUNT_SOURCE, default=True)


def file_environment(device_count: DeviceCount, settings: Settings) -> Environment:
    """What the library models JAX with: the device count (an assumption when it is the
    default), the default dtype and x64."""
    assumed_origin = Origin(
        device_count.source,
        assumption=f"{device_count.count} devices ({device_count.source})" if device_count.default else None,
    )
    default_dtype = settings.dtype or parse_dtype("float64" if settings.x64 else "float32", x64=settings.x64)
    return Environment(Const(device_count.count, origin=assumed_origin), default_dtype, settings.x64)


def assumed_device_count(pragmas: Pragmas, settings: Settings, device_count: DeviceCount) -> str | None:
    """The device count as an assumption, when neither the file nor a setting states it."""
    stated = pragmas.device_count or pragmas.device_hint or settings.device_count is not None
    return None if stated else f"the default device count ({device_count.count})"


def fallback_mesh(pragmas: Pragmas, settings: Settings) -> MeshFact | None:
    """The mesh to lay arrays out on where the code has none: the file's mesh pragma, else the
    `default-mesh` setting."""
    if pragmas.mesh is not None:
        mesh, line = pragmas.mesh
        return MeshFact(mesh, None, None, f"# shardls: mesh pragma at line {line + 1}", "the mesh pragma")
    if settings.default_mesh is not None:
        return MeshFact(
            settings.default_mesh, None, None, settings.default_mesh_source, settings.default_mesh_source
        )
    return None
