"""A NamedSharding is laid out on its own mesh, even where that mesh is not known.

JAX 0.10 places `device_put(x, NamedSharding(m, spec))` on `m` under any context mesh (`with
jax.set_mesh(other):`, the deprecated `with other:`), so a context mesh only stands in for a
mesh the code names but shardls cannot evaluate: it may show a layout, and decides no problem.
TransformerEngine's `examples/jax/ep/ep_moe.py` builds `NamedSharding(args.mesh, ...)` with
`args.mesh` set on the argparse namespace and entered as `with args.mesh:`; where `args.mesh` was
not known, the sharding was read as a bare PartitionSpec under a legacy mesh (an SH202 error).
"""

from __future__ import annotations

from analysis_helpers import analyze, line_of

from shardls.analysis.settings import Settings

EIGHT = Settings(device_count=8, device_count_source="--device-count")

HEAD = """\
import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
"""


def _codes(source: str) -> list[str]:
    return [d.code for d in analyze(source, EIGHT).diagnostics]


def test_a_named_sharding_of_an_unknown_mesh_is_no_bare_spec_under_with_mesh() -> None:
    source = HEAD + (
        "def _parse_args():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--num-tokens', type=int, default=8)\n"
        "    return p.parse_args()\n"
        "\n"
        "def _make_inputs(args):\n"
        "    mesh = args.mesh\n"
        "    spec = NamedSharding(mesh, P(('dp', 'ep'), None))\n"
        "    return jax.make_array_from_process_local_data(spec, np.zeros((1, 4)), (8, 4))\n"
        "\n"
        "def main():\n"
        "    args = _parse_args()\n"
        "    args.mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('dp', 'ep'))\n"
        "    with args.mesh:\n"
        "        x = _make_inputs(args)\n"
    )
    assert _codes(source) == ["SH203"]


def test_the_context_mesh_decides_nothing_for_a_named_sharding_of_its_own() -> None:
    source = HEAD + (
        "def main(holder):\n"
        "    mesh = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))\n"
        "    with jax.set_mesh(mesh):\n"
        "        b = jax.device_put(np.zeros((8, 4)), NamedSharding(holder.mesh, P('y')))\n"
        "        g = jax.jit(lambda a: a, in_shardings=NamedSharding(holder.mesh, P('y')))\n"
        "        out = g(jnp.zeros((8, 4)))\n"
    )
    analysis = analyze(source, EIGHT)
    assert not analysis.diagnostics
    placed = [s for s in analysis.sites if s.span.line == line_of(source, "b = ")]
    assert placed and all(s.layout is None for s in placed)


def test_a_bare_spec_still_needs_set_mesh_under_with_mesh() -> None:
    source = HEAD + (
        "mesh = jax.make_mesh((8,), ('x',))\nwith mesh:\n    b = jax.device_put(np.zeros((8, 4)), P('x'))\n"
    )
    assert "SH202" in _codes(source)
