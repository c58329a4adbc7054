"""Numbers as a memory report shows them: `6.7 B` parameters, `12.5 GiB`, and the one-line summary
the code lens, the hover and the diagnostic share.

Parameter counts are decimal (`6.7 B`, as model sizes are quoted); bytes are binary (GiB), as
device memory is sized and as every other rendering of shardls writes them (`render.units`), so
that a report's figures can be read against a hover's or against `--hbm 16GiB` directly. The JSON
output keeps exact byte counts.
"""

from __future__ import annotations

from shardls.core import Mesh
from shardls.memory.model import Dim, ModelMemory
from shardls.memory.optimizer import OptimizerState
from shardls.render.units import short_bytes

_COUNT_UNITS = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K"))
_SHORT_DTYPES = {"bfloat16": "bf16", "float32": "f32", "float16": "f16", "float64": "f64"}


def count_text(count: int) -> str:
    """`6.7 B`, `183.8 M`, `512`."""
    for scale, unit in _COUNT_UNITS:
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return str(count)


def mesh_label(mesh: Mesh | None) -> str | None:
    """`fsdp=8,tp=4`, as the code lens shows it; None for no mesh (one device)."""
    return None if mesh is None else ",".join(f"{n}={s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes))


def shape_text(shape: tuple[Dim, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def per_device_bytes(model: ModelMemory, state: OptimizerState | None) -> int:
    """What the fullest device holds: parameters, plus the optimizer state when one is given."""
    return model.max_bytes_per_device + (state.bytes_per_device if state is not None else 0)


def summary(model: ModelMemory, state: OptimizerState | None = None) -> str:
    """`params 6.7 B · 12.5 GiB bf16 · 1.6 GiB / device (fsdp=8)`, plus `+ adam 3.1 GiB / device`."""
    dtypes = "/".join(_SHORT_DTYPES.get(name, name) for name in model.dtypes)
    where = f"({model.mesh_text})" if model.mesh_text else "(one device)"
    text = (
        f"params {count_text(model.param_count)} · {short_bytes(model.total_bytes)} {dtypes} · "
        f"{short_bytes(model.max_bytes_per_device)} / device {where}"
    )
    if state is not None and state.bytes_per_device:
        text += f" · + {state.optimizer.name} {short_bytes(state.bytes_per_device)} / device"
    if any(p.is_symbolic for p in model.params):
        text += " · some sizes symbolic"
    return text
