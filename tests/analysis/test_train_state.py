"""Flax's `TrainState` as a pytree (issue #12, EasyLM's llama_train.py:141): `jax.eval_shape` of a
`TrainState.create(...)`, a rule table matched over it by key path, and the tree of specs that
gives paired with the state at `jax.jit`'s shardings. The figures are JAX's (corpus r67 run on
8 devices: `wq/kernel` (32, 16) on P('fsdp', 'mp') is (16, 4) per device); the optimizer's state
is left unknown, never guessed."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze

from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.analysis.settings import Settings

PROGRAM = Path(__file__).parent.parent / "corpus" / "r67_train_state_rules.py"


def layouts(analysis: FileAnalysis, kind: SiteKind) -> dict[str, tuple[int, ...] | None]:
    return {
        site.name: site.layout.shard_shape if site.layout is not None else None
        for site in analysis.sites
        if site.kind is kind and site.name is not None and site.name.startswith("train_state")
    }


def test_the_state_of_specs_lays_out_the_step_and_each_parameter_by_its_rule() -> None:
    analysis = analyze(PROGRAM.read_text(), Settings(device_count=8))
    assert analysis.diagnostics == ()
    expected = {
        "train_state.step": (),
        "train_state.params['params']['wq']['kernel']": (16, 4),
        "train_state.params['params']['wq']['bias']": (16,),
        "train_state.params['params']['w2']['kernel']": (4, 4),
        "train_state.params['params']['w2']['bias']": (8,),
    }
    assert layouts(analysis, SiteKind.JIT_IN) == expected
    assert layouts(analysis, SiteKind.JIT_OUT) == expected
    assert not any("opt_state" in (site.name or "") for site in analysis.sites)


def test_the_fields_of_a_state_are_read_and_its_optimizer_state_is_unknown() -> None:
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        import optax
        from flax.training.train_state import TrainState
        from jax.sharding import NamedSharding, PartitionSpec as P

        mesh = jax.make_mesh((8,), ("x",))
        state = TrainState.create(apply_fn=None, params={"w": jnp.zeros((16, 4))}, tx=optax.sgd(0.1))
        placed = jax.device_put(state.params["w"], NamedSharding(mesh, P("x")))
        moments = jax.device_put(state.opt_state, NamedSharding(mesh, P("x")))
        """,
        Settings(device_count=8),
    )
    assert analysis.diagnostics == ()
    shapes = {site.name: site.layout.shard_shape if site.layout else None for site in analysis.sites}
    assert shapes["placed"] == (2, 4)
    assert shapes.get("moments") is None
