"""Flax's `TrainState` (`flax.training.train_state`), the pytree real training loops lay out
whole: EasyLM's `jax.eval_shape(init_fn, rng)` of a `TrainState.create(params=..., tx=...)`,
matched against a rule table (`match_partition_rules`) into a tree of specs of the same type,
which `jax.jit`'s `in_shardings`/`out_shardings` then pair with the state leaf by leaf.

A train state is a Flax struct dataclass: its pytree children are `step`, `params` and
`opt_state` (in that order, each reached by a `GetAttrKey`), while `apply_fn` and `tx` are
static fields, not leaves. `step` is the scalar `0` (an `int32[]` once traced or shaped);
`params` is the tree given; `opt_state` is what `tx.init(params)` makes of it, whose structure
depends on the optimizer (optax's `adamw` gives `(ScaleByAdamState(count, mu, nu), ...)`),
which shardls does not model: it is unknown, never guessed, and so is every spec or layout a
map over the state makes of it, while `step` and `params` keep theirs. A training step's
`state.apply_gradients(grads=grads)` gives the state one step on: the same params, each of its
shape and dtype (optax's `apply_updates` casts every update back to its parameter's dtype), laid
out anew, and the optimizer's state still unknown (flax's `flax_on_pjit` guide's `train_step`,
whose `out_shardings` are the state's).
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.values import ArrayV, BoundMethod, Unknown, Value
from shardls.core.dtypes import parse_dtype

_STATES = ("flax.training.train_state.TrainState",)
_STEP = ArrayV((), parse_dtype("int32"))
"""`step=0`, as JAX shapes and traces it."""


@dataclass(frozen=True)
class StructV(Value):
    """An instance of a Flax struct dataclass: its pytree children (in the order JAX flattens
    them, each under a `GetAttrKey` of its name) and its static fields."""

    type_name: str
    children: tuple[tuple[str, Value], ...]
    static: tuple[tuple[str, Value], ...] = ()

    def child(self, name: str) -> Value | None:
        return dict(self.children).get(name)

    def with_children(self, values: tuple[Value, ...]) -> StructV:
        """The same node over other children (what a map over the tree gives)."""
        names = [name for name, _ in self.children]
        return StructV(self.type_name, tuple(zip(names, values, strict=True)), self.static)

    def same_node(self, other: Value) -> bool:
        """Whether `other` is a node of the same type with the same children, as JAX pairs trees."""
        return (
            isinstance(other, StructV)
            and other.type_name == self.type_name
            and [name for name, _ in other.children] == [name for name, _ in self.children]
        )


@calls(*(f"{state}.create" for state in _STATES))
def _create(call: CallArgs) -> Value | None:
    """`TrainState.create(apply_fn=..., params=..., tx=...)`: step 0, the params as given, the
    optimizer's state unknown (see the module's docstring)."""
    params = call.get(None, "params")
    if params is None or call.args:
        return None
    opt_state = Unknown("the optimizer's state (TrainState.opt_state): optax's structure is not modelled")
    static = tuple(
        (name, value) for name in ("apply_fn", "tx") if (value := call.get(None, name)) is not None
    )
    children = (("step", _STEP), ("params", params), ("opt_state", opt_state))
    return StructV("TrainState", children, static)


@attributes(StructV)
def _field(library: Library, evaluator: object, base: Value, attr: str, frame: object) -> Value | None:
    """`state.params`, `state.step`, `state.tx`, and `partition.params` of a tree of specs."""
    if not isinstance(base, StructV):
        return None
    found = base.child(attr)
    if found is None:
        found = dict(base.static).get(attr)
    return found if found is not None else Unknown(f"{base.type_name}.{attr} is not modelled")


@methods(StructV, "apply_gradients")
def _apply_gradients(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`state.apply_gradients(grads=grads)` of a `TrainState`: step one on, params of the same
    shapes and dtypes, the optimizer's state unknown. Other fields replaced by keyword (a
    subclass's `batch_stats=`) are not modelled: the state is unknown then."""
    from shardls.analysis.library.pytrees import mapped

    state = method.base
    if not isinstance(state, StructV) or state.type_name != "TrainState" or set(call.kwargs) - {"grads"}:
        return None
    if call.args or "grads" not in call.kwargs:
        return None
    params = mapped(state.child("params"), _updated)
    opt_state = Unknown("the optimizer's state (TrainState.opt_state): optax's structure is not modelled")
    return StructV(
        state.type_name, (("step", _STEP), ("params", params), ("opt_state", opt_state)), state.static
    )


def _updated(leaf: Value) -> Value:
    """A parameter after its update: its shape and dtype, its box (`nn.Partitioned`) kept."""
    from shardls.analysis.library.linen_specs import PartitionedV

    if isinstance(leaf, PartitionedV):
        return PartitionedV(_updated(leaf.value), leaf.names, leaf.mesh)
    if isinstance(leaf, ArrayV):
        return ArrayV(leaf.shape, leaf.dtype)
    return Unknown("an updated parameter of unknown kind")
