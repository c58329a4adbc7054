"""The contexts code runs in (the mesh made current, logical axis rules, `jit`, `vmap` stacking,
the call it was reached by), the calls the walker visits in them, and how a `with` statement
changes the context."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.facts import Span
from shardls.analysis.values import Choice, Guard, MeshV, Ref, Unknown, Value, options
from shardls.stored_init import stored_init


@stored_init
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


@stored_init
@dataclass(frozen=True)
class RulesContext:
    rules: Value
    how: str
    linen: bool = False


@stored_init
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
    branches: frozenset[Guard] = frozenset()
    """The `if` branches on the assumed device count the code runs in, each what a branch says
    of the count (`device_branches`): `if jax.device_count() == 4:` runs its body where there are
    4 devices, and the code after `if jax.device_count() < 16: return` where there are 16 or more."""
    count: int | None = None
    """The one count the walk runs with where `branches` leave a few (after `if
    jax.device_count() > 2 or ...: skipTest(...)`, 1 or 2): the code there runs once per count."""

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


@stored_init
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


_UNDER_MESH = "get_abstract_model"
"""`nnx.get_abstract_model(lambda: Model(...), mesh)` builds the model under `jax.set_mesh(mesh)`."""


def argument_context(
    evaluator: Evaluator, call: ast.Call, parent: ast.Call | None, frame: Frame, context: Context
) -> Context:
    """The context of a call written inside another's arguments: the mesh of
    `nnx.get_abstract_model(lambda: Model(...), mesh)` is current while `Model(...)` runs (a mesh
    not known here may be)."""
    if parent is None or not _named(parent.func, _UNDER_MESH) or call is parent:
        return context
    mesh_node = (
        parent.args[1]
        if len(parent.args) > 1
        else next((k.value for k in parent.keywords if k.arg == "mesh"), None)
    )
    if mesh_node is None:
        return context
    func = evaluator.evaluate(parent.func, frame)
    if not any(isinstance(o, Ref) and o.qualname.endswith(f"nnx.{_UNDER_MESH}") for o in options(func)):
        return context
    mesh = evaluator.evaluate(mesh_node, frame)
    if not isinstance(mesh, MeshV):
        return replace(context, unknown_caller=True)
    how = f"nnx.{_UNDER_MESH}(..., {short(mesh_node)}) at line {frame.line_of(parent) + 1}"
    return replace(context, meshes=context.meshes + (MeshContext(mesh, how, frame.span(mesh_node)),))


def _named(func: ast.expr, name: str) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == name) or (
        isinstance(func, ast.Name) and func.id == name
    )


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


_SETTING_MESH = ("jax.set_mesh", "jax.sharding.use_abstract_mesh")
"""Library calls whose `with` makes their argument the current mesh."""


def _may_enter_a_mesh(expression: ast.expr, value: Value, evaluator: Evaluator, frame: Frame) -> bool:
    """A context manager whose value is not known: a name (`with mesh:`), or a call of code
    shardls cannot follow (`with config.mesh_context():`); not a library call it knows, unless it
    sets a mesh not known here (`jax.set_mesh(mesh)`, the mesh chosen by the device count, see
    `decided`)."""
    if isinstance(value, Choice):
        return any(isinstance(option, MeshV) for option in options(value))
    if not isinstance(value, Unknown):
        return False
    if isinstance(expression, ast.Call):
        called = list(options(evaluator.evaluate(expression.func, frame)))
        return any(isinstance(o, Ref) and o.qualname in _SETTING_MESH for o in called) or not any(
            isinstance(o, Ref) for o in called
        )
    return isinstance(expression, (ast.Name, ast.Attribute))


def short(node: ast.AST) -> str:
    """The source of `node`, cut to 60 characters, for saying where a context comes from."""
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
