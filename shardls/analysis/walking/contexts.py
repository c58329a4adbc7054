"""The contexts code runs in (the mesh made current, logical axis rules, `jit`, `vmap` stacking,
the call it was reached by), the calls the walker visits in them, and how a `with` statement
changes the context."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.facts import Span
from shardls.analysis.values import MeshV, Ref, Unknown, Value, options


@dataclass(frozen=True)
class MeshContext:
    """A mesh made current by `set_mesh`/`use_abstract_mesh` (or the deprecated `with mesh:`)."""

    mesh: MeshV
    how: str
    """e.g. `with jax.set_mesh(mesh) at line 12`."""
    span: Span
    legacy: bool = False
    in_turn: bool = False
    """Set by one of several different top-level `jax.set_mesh` statements (a tutorial's mesh per
    section): a function defined under it may well be called under another."""


@dataclass(frozen=True)
class RulesContext:
    rules: Value
    how: str
    linen: bool = False


@dataclass(frozen=True)
class Context:
    meshes: tuple[MeshContext, ...] = ()
    rules: tuple[RulesContext, ...] = ()
    inside_function: bool = False
    inside_jit: bool = False
    call_site: str | None = None
    """How the enclosing function was called, for provenance (`MLP(512, ...) at line 40`)."""
    stacked: Value | None = None
    """The `nnx.vmap`/`nnx.split_rngs` stacking of the enclosing function, if any."""
    eager_sharding: bool | None = None
    """`with nnx.use_eager_sharding(False):` (None: Flax's default, eager)."""
    traced: bool | None = False
    """Whether code here runs under a JAX trace (`jax.jit`, `shard_map`, `vmap`, ...) rather than
    eagerly; None when it may be either (a function with an unknown decorator or caller)."""
    unknown_caller: bool = False
    """Some function up the chain of calls has no visible caller (`Attention(...)` called in
    `Block.__init__`, which only another file builds): the mesh and rules in effect there are
    decided by code shardls cannot see, so their absence is no mistake."""
    runs_at: tuple[str, int] | None = None
    """The top-level statement the enclosing function's call runs during (`Frame.runs_at`)."""

    @property
    def mesh(self) -> MeshContext | None:
        return self.meshes[-1] if self.meshes else None

    @property
    def spec_mesh(self) -> MeshContext | None:
        """The mesh a bare spec means here: `jax.set_mesh`'s, never a deprecated `with mesh:`."""
        mesh = self.mesh
        return mesh if mesh is not None and not mesh.legacy else None


ASSUMED_UNDER_JIT = "inside a function: assumed to run under jax.jit"
"""What a `with_sharding_constraint` in a function no visible `jit` traces rests on: XLA pads an
uneven dimension under jit, while run eagerly JAX rejects it."""

UNKNOWN_CALLER = Context(inside_function=True, unknown_caller=True, traced=None)
"""The context of a function's body when none of its calls is visible."""


@dataclass(frozen=True)
class Visit:
    """One call, in one frame and context."""

    call: ast.Call
    frame: Frame
    context: Context
    statement: ast.stmt
    target: str | None
    """The name the call's result is assigned to (`self.up` -> `up`), for naming sites."""
    parent: ast.Call | None = None
    """The call this call is an argument of (`NamedSharding(...)` inside `device_put(...)`)."""


def entered(evaluator: Evaluator, expression: ast.expr, frame: Frame, context: Context) -> Context:
    """The context inside `with expression:`: a mesh made current, logical axis rules, eager
    sharding switched, or a mesh that may be current when the value is not known."""
    value = evaluator.evaluate(expression, frame)
    line = frame.line_of(expression) + 1
    if _may_enter_a_mesh(expression, value, evaluator, frame):
        # `with global_mesh:` whose mesh cannot be evaluated: a mesh may well be in effect.
        return replace(context, unknown_caller=True)
    if isinstance(value, MeshV):
        is_call = isinstance(expression, ast.Call)
        how = f"with {short(expression)} at line {line}"
        current = MeshContext(value, how, frame.span(expression), legacy=not is_call)
        return replace(context, meshes=context.meshes + (current,))
    if isinstance(expression, ast.Call):
        func = evaluator.evaluate(expression.func, frame)
        if isinstance(func, Ref) and func.qualname == "flax.nnx.use_eager_sharding" and expression.args:
            setting = truthiness(evaluator.evaluate(expression.args[0], frame))
            return replace(context, eager_sharding=setting)
        if isinstance(func, Ref) and func.qualname == "flax.nnx.logical_axis_rules" and expression.args:
            rules = evaluator.evaluate(expression.args[0], frame)
            spelled = ast.unparse(expression.func)
            how = f"with {spelled}(...) at line {line}"
            linen = spelled.startswith(("nn.", "linen.", "flax.linen."))
            return replace(context, rules=context.rules + (RulesContext(rules, how, linen),))
    return context


def _may_enter_a_mesh(expression: ast.expr, value: Value, evaluator: Evaluator, frame: Frame) -> bool:
    """A context manager whose value is not known: a name (`with mesh:`), or a call of code
    shardls cannot follow (`with config.mesh_context():`); not a library call it knows."""
    if not isinstance(value, Unknown):
        return False
    if isinstance(expression, ast.Call):
        return not any(isinstance(o, Ref) for o in options(evaluator.evaluate(expression.func, frame)))
    return isinstance(expression, (ast.Name, ast.Attribute))


def short(node: ast.AST) -> str:
    """The source of `node`, cut to 60 characters, for saying where a context comes from."""
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
