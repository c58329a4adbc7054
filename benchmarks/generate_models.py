"""Generated model files for the analysis and server benchmarks.

Each file has meshes, many NNX modules with annotated layers, `with_sharding_constraint` and
`device_put` calls, and every 7th block a deliberately indivisible layout tagged
`# expect: SH001` so a run can be scored (all found, none extra).
"""

from __future__ import annotations

import re
from pathlib import Path

HEADER = '''"""A generated model file for shardls benchmarks."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

init = nnx.initializers.lecun_normal()
mesh = jax.make_mesh((2, 4), ("data", "model"))
'''

BLOCK = """

class Block{i}(nnx.Module):
    def __init__(self, d_model: int = {d_model}, rngs: nnx.Rngs | None = None):
        self.up = nnx.Linear(
            d_model, 4 * d_model, kernel_init=nnx.with_partitioning(init, (None, "model")), rngs=rngs
        )
        self.down = nnx.Linear(
            4 * d_model, d_model, kernel_init=nnx.with_partitioning(init, ("model", None)), rngs=rngs
        )

    def __call__(self, x):
        x = self.up(x)
        x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", "model")))
        return self.down(x)


x{i} = jax.device_put(jnp.zeros(({rows}, 1024)), NamedSharding(mesh, P("data", None))){tag}
"""

_TAG = re.compile(r"#\s*expect:\s*(SH\d+)")


def model_source(lines: int) -> str:
    """A file of about `lines` lines; blocks whose index is a multiple of 7 hold a mistake."""
    parts = [HEADER]
    i = 0
    while sum(part.count("\n") for part in parts) < lines:
        broken = i % 7 == 3
        rows = 127 if broken else 128
        tag = "  # expect: SH001" if broken else ""
        parts.append(BLOCK.format(i=i, d_model=256 + 8 * (i % 16), rows=rows, tag=tag))
        i += 1
    return "".join(parts)


def expected(source: str) -> set[tuple[int, str]]:
    """(0-based line, code) of every tagged mistake."""
    return {
        (number, match.group(1))
        for number, line in enumerate(source.split("\n"))
        if (match := _TAG.search(line))
    }


def write(directory: Path, lines: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"model_{lines // 1000}k.py"
    path.write_text(model_source(lines))
    return path
