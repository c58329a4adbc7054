"""The analyzer's side of sharding in types: evaluate what each statement computes where a mesh
with Explicit axes may apply, and turn the recorded events into sites (hover, `--show-layouts`)
and diagnostics.

A rejection is an error only when every fact behind it is known: the operands are not one of
several values an undecided `if` leaves (`TypeEvent.certain`), and the mesh rests on no
assumption (the default device count); otherwise a warning that names what was assumed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import Site, SiteKind
from shardls.analysis.sharded.events import TypeEvent
from shardls.analysis.sharded.propagate import has_explicit_axis
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.values import ArrayV, TypedArray, Value
from shardls.analysis.walker import Context, MeshContext
from shardls.core import AxisType, Mesh, UsageContext
from shardls.core.movement import DataMovement, MovementRefused, data_movement

NAME = "name"
"""The operation of an event that only says which type a name has where it is written."""
ONE_OF_SEVERAL = "the operands are one of several values the code may have here"


def context_mesh(context: Context) -> MeshContext | None:
    """The mesh a bare spec means in this context: `jax.set_mesh`'s (never the deprecated `with
    mesh:`, which sharding in types does not read)."""
    mesh = context.mesh
    return mesh if mesh is not None and not mesh.legacy else None


def tracing(context: Context) -> bool | None:
    """Whether code in this context is traced by `jax.jit` (True), runs eagerly (False: module
    level, or only called from eager code that shardls sees), or either (None)."""
    return True if context.inside_jit else context.traced


def has_explicit_axis_type(mesh: Mesh) -> bool:
    return AxisType.EXPLICIT in mesh.axis_types


class TypingPass:
    """Evaluates the value of every simple statement, in files where typing can apply, so that
    arrays computed without a call (`y = x @ w`, `t = x.T`) are typed too; names the statements'
    targets for the sites."""

    def __init__(self, evaluator: Evaluator, active: bool) -> None:
        self.evaluator = evaluator
        self.active = active
        """Some mesh of the file has Explicit axes (else no array of it can be typed)."""
        self.names: dict[int, str] = {}

    def statement(self, stmt: ast.stmt, frame: Frame, context: Context) -> None:
        value = _computed(stmt)
        mesh = context_mesh(context)
        if value is None or not (self.active or (mesh is not None and has_explicit_axis(mesh.mesh))):
            return
        name = _target(stmt)
        if name is not None:
            self.names[id(value)] = name
        evaluator = self.evaluator
        previous = evaluator.context_mesh, evaluator.tracing
        evaluator.context_mesh = mesh.mesh if mesh is not None else None
        evaluator.tracing = tracing(context)
        try:
            result = evaluator.evaluate(value, frame)
            self._names(stmt, value, result, frame)
        finally:
            evaluator.context_mesh, evaluator.tracing = previous

    def _names(self, stmt: ast.stmt, value: ast.expr, result: Value, frame: Frame) -> None:
        """Each name of a typed array in the statement, so that a hover on it answers: the
        target (`t` in `t = x.T`) and the names the value reads (`x`)."""
        recorder = self.evaluator.typing
        if recorder is None or frame.module.path is None:
            return
        target = _target_node(stmt)
        found: list[tuple[ast.AST, TypedArray]] = []
        if target is not None and isinstance(result, ArrayV) and result.typed is not None:
            found.append((target, result.typed))
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                typed = _typed(self.evaluator.evaluate(node, frame))
                if typed is not None:
                    found.append((node, typed))
        for node, typed in found:
            span = frame.span(node)
            name = node.id if isinstance(node, ast.Name) else _target(stmt)
            if name is not None:
                self.names[id(node)] = name
            recorder.record(
                TypeEvent(frame.module.path, span, NAME, typed, assumptions=typed.assumptions, node=node)
            )

    def report(self, builder: SiteBuilder, events: Iterable[TypeEvent]) -> None:
        """Sites for typed results (`merge_types` folds those of placements and `out_sharding=`
        results into the recognizers' sites), diagnostics for rejections; each once."""
        seen: set[tuple[object, ...]] = set()
        for event in events:
            if event.path != builder.path:
                continue
            if event.problem is not None:
                assumed = (*event.assumptions, *(() if event.certain else (ONE_OF_SEVERAL,)))
                builder.report(event.span, event.problem, assumed=assumed)
                continue
            if event.result is None:
                continue
            key = (event.span, event.result.type, event.operation == NAME)
            if key not in seen:
                seen.add(key)
                builder.sites.append(self._site(builder, event))

    def _site(self, builder: SiteBuilder, event: TypeEvent) -> Site:
        assert event.result is not None
        typed = event.result
        t = typed.type
        mesh = builder.mesh_fact(typed.mesh)
        name = self.names.get(id(event.node)) if event.node is not None else None
        return Site(
            SiteKind.ARRAY_NAME if event.operation == NAME or event.placement else SiteKind.ARRAY_TYPE,
            event.span,
            name,
            UsageContext.RESHARD,
            mesh,
            t.partition_spec,
            shape=t.shape,
            dtype=t.dtype,
            layout=t.layout(),
            assumptions=typed.assumptions,
            path=builder.path,
            jax_type=t.jax_type,
            type_sources=_sources_text(typed),
            compiler_chosen=_auto_axes(typed),
            movement=_movement(event),
        )


def merge_types(sites: list[Site]) -> list[Site]:
    """Each typed array once, and where a recognizer has a site for the same array (a placement,
    an `out_sharding=` result), its type folded into that site. A placement no recognizer saw
    (an array made without a sharding, replicated on the context mesh) is for hovers only. A segment reports the types it
    evaluated, also of statements elsewhere in the file whose values it reused, so this runs on
    the whole file's sites."""
    recognized: dict[tuple[object, ...], int] = {}
    for index, site in enumerate(sites):
        if site.kind not in (SiteKind.ARRAY_TYPE, SiteKind.ARRAY_NAME):
            recognized.setdefault((site.span, site.shape), index)
    merged = list(sites)
    dropped: set[int] = set()
    seen: set[tuple[object, ...]] = set()
    for index, site in enumerate(sites):
        if site.jax_type is None or site.kind not in (SiteKind.ARRAY_TYPE, SiteKind.ARRAY_NAME):
            continue
        key = (site.kind, site.span, site.jax_type, site.name)
        at = recognized.get((site.span, site.shape))
        if key in seen or at is not None:
            dropped.add(index)
        seen.add(key)
        if at is not None and merged[at].jax_type is None:
            merged[at] = replace(
                merged[at],
                jax_type=site.jax_type,
                type_sources=site.type_sources,
                compiler_chosen=site.compiler_chosen,
                movement=site.movement,
            )
    return [site for index, site in enumerate(merged) if index not in dropped]


def _movement(event: TypeEvent) -> DataMovement | None:
    """For a placement of an array whose layout was known: what each device must receive."""
    assert event.result is not None
    source = event.operands[0].type.layout() if event.placement and event.operands else None
    destination = event.result.type.layout()
    if source is None or destination is None:
        return None
    try:
        return data_movement(source, destination)
    except MovementRefused:
        return None


def _sources_text(typed: TypedArray) -> tuple[str, ...]:
    return tuple(f"{axis}: {where}" for axis, where in typed.sources)


def _auto_axes(typed: TypedArray) -> tuple[str, ...]:
    mesh = typed.mesh.mesh
    return tuple(n for n, k in zip(mesh.axis_names, mesh.axis_types, strict=True) if k is AxisType.AUTO)


def _computed(stmt: ast.stmt) -> ast.expr | None:
    """The expression a statement computes, when it may compute an array (not a bare name or
    literal)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
        value = stmt.value
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        name = ast.copy_location(ast.Name(stmt.target.id, ast.Load()), stmt.target)
        value = ast.copy_location(ast.BinOp(name, stmt.op, stmt.value), stmt)
        value.end_lineno, value.end_col_offset = stmt.end_lineno, stmt.end_col_offset
    else:
        return None
    if value is None or isinstance(value, (ast.Constant, ast.Name, ast.Lambda)):
        return None
    return value


def _typed(value: Value) -> TypedArray | None:
    return value.typed if isinstance(value, ArrayV) else None


def _target_node(stmt: ast.stmt) -> ast.expr | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return stmt.targets[0] if isinstance(stmt.targets[0], (ast.Name, ast.Attribute)) else None
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(
        stmt.target, (ast.Name, ast.Attribute)
    ):
        return stmt.target
    return None


def _target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        target = stmt.target
    else:
        return None
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None
