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


GUIDE = Path(__file__).parent.parent / "corpus" / "r69_partial_init_apply_gradients.py"


def test_a_training_step_keeps_the_parameters_it_updates() -> None:
    """flax's `flax_on_pjit` guide (corpus r69): the state's shardings come from `jax.eval_shape`
    of a `functools.partial(init_fn, ...)`, and `state.apply_gradients(grads=grads)` returns the
    params with their shapes, which `out_shardings=state_sharding` lay out as JAX does (r69's
    asserts: the kernel (16, 32) on P(None, 'model') is (16, 8) per device, W2 (8, 16))."""
    analysis = analyze(GUIDE.read_text(), Settings(device_count=8))
    assert analysis.diagnostics == ()
    out = {
        site.name: site.layout.shard_shape if site.layout is not None else None
        for site in analysis.sites
        if site.kind is SiteKind.JIT_OUT and (site.name or "").startswith("new_state")
    }
    assert out == {
        "new_state.step": (),
        "new_state.params['Dense_0']['kernel']": (16, 8),
        "new_state.params['Dense_0']['bias']": (32,),
        "new_state.params['W2']": (8, 16),
    }


def test_apply_gradients_with_other_fields_is_not_modelled() -> None:
    """`apply_gradients(grads=g, batch_stats=...)` replaces a field of a subclass: unknown."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        import optax
        from flax.training.train_state import TrainState
        from jax.sharding import NamedSharding, PartitionSpec as P

        mesh = jax.make_mesh((8,), ("x",))
        state = TrainState.create(apply_fn=None, params={"w": jnp.zeros((16, 4), jnp.bfloat16)}, tx=optax.sgd(0.1))
        stepped = state.apply_gradients(grads={"w": jnp.ones((16, 4))})
        other = state.apply_gradients(grads={"w": jnp.ones((16, 4))}, batch_stats={})
        placed = jax.device_put(stepped.params["w"], NamedSharding(mesh, P("x")))
        moved = jax.device_put(stepped.step, NamedSharding(mesh, P()))
        unknown = jax.device_put(other.params["w"], NamedSharding(mesh, P("x")))
        """,
        Settings(device_count=8),
    )
    assert analysis.diagnostics == ()
    sites = {site.name: site for site in analysis.sites}
    assert sites["placed"].layout is not None and sites["placed"].layout.shard_shape == (2, 4)
    assert sites["placed"].dtype is not None and sites["placed"].dtype.name == "bfloat16"
    assert sites["moved"].layout is not None and sites["moved"].layout.shard_shape == ()
    assert sites["unknown"].shape is None
