"""The analyzer's side of sharding in types: evaluate what each statement computes where a mesh
with Explicit axes may apply, and turn the recorded events into sites (hover, `--show-layouts`)
and diagnostics.

A rejection is an error only when every fact behind it is known: the operands are not one of
several values an undecided `if` leaves (`TypeEvent.certain`), and the mesh rests on no
assumption (the default device count); otherwise a warning that names what was assumed.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property

from shardls.analysis.evaluation.device_branches import devices_stated
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import Site, SiteKind
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Scope
from shardls.analysis.sharded.events import TypeEvent
from shardls.analysis.sharded.propagate import NAME, has_explicit_axis, named
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.source import Segment
from shardls.analysis.values import ArrayV, Const, TypedArray, Value
from shardls.analysis.walker import Context, MeshContext, first_arguments
from shardls.core import UsageContext
from shardls.core.movement import DataMovement, MovementRefused, data_movement
from shardls.core.typing import type_of_layout

_MAKERS = frozenset(
    {
        *("device_put", "reshard", "make_array_from_callback", "make_array_from_single_device_arrays"),
        *("zeros", "ones", "full", "empty", "arange", "array", "asarray", "normal", "uniform"),
        *("truncated_normal", "bernoulli", "randint", "zeros_like", "ones_like", "full_like"),
    }
)
"""Calls that make or place an array: a statement with one may compute a typed array."""
_ASSIGNING = frozenset({"assign", "augassign", "with"})
_MAPPING = ("shard_map", "vmap")
_SETTING_WORDS = ("set_mesh", "use_mesh", "use_abstract_mesh", "shard_map")
"""What makes a mesh with Explicit or Manual axes current for the code below it: `jax.set_mesh`,
`jax.sharding.use_mesh`, `use_abstract_mesh`, and a `shard_map` body (its manual axes)."""
_INDEXES = "axis_index"
"""`jax.lax.axis_index(...)` makes a typed array inside a shard_map body from no typed name."""
_MAX_CHAIN = 32
_WORD = re.compile(r"[A-Za-z_]\w*")
_ANY: frozenset[str] = frozenset({"*"})
_NOTHING = Const(None)
ONE_OF_SEVERAL = "the operands are one of several values the code may have here"


def _decorated_by_mapping(stmt: ast.stmt) -> bool:
    """`@jax.vmap`, `@partial(nnx.vmap, ...)`, ...: a function whose body runs on elements (or
    blocks) of typed arrays, whatever words it contains."""
    decorators = getattr(stmt, "decorator_list", ())
    return any(wrapper in ast.unparse(d) for d in decorators for wrapper in _MAPPING)


def context_mesh(context: Context) -> MeshContext | None:
    """The mesh a bare spec means in this context: `jax.set_mesh`'s (never the deprecated `with
    mesh:`, which sharding in types does not read)."""
    return context.spec_mesh


def tracing(context: Context) -> bool | None:
    """Whether code in this context is traced by `jax.jit` (True), runs eagerly (False: module
    level, or only called from eager code that shardls sees), or either (None)."""
    return True if context.inside_jit else context.traced


class TypingPass:
    """Evaluates the value of every simple statement, in files where typing can apply, so that
    arrays computed without a call (`y = x @ w`, `t = x.T`) are typed too; names the statements'
    targets for the sites."""

    def __init__(self, evaluator: Evaluator, module: ModuleInfo, active: bool) -> None:
        self.evaluator = evaluator
        self.module = module
        self.active = active
        """Some mesh of the file has Explicit axes (else no array of it can be typed)."""
        self.names: dict[int, str] = {}
        """The target's name of each statement this pass evaluated, by its value's node (an
        augmented assignment's value is a node made for the visit) and its target's node."""
        self._targets: dict[int, tuple[Segment, dict[int, str]]] = {}
        """`_assigned_names` per segment (kept with it, so that its id is not reused)."""
        self._typables: dict[tuple[int, str], bool] = {}
        self._words: dict[tuple[int, int], frozenset[str]] = {}
        """Per statement and scope: `_ANY` when it may compute a typed array whatever its
        parameters hold, else the words a parameter bound to a typed array would have to be."""
        self._alive: list[Scope] = []
        """Keeps the scopes `_typables` is keyed by alive, so their ids cannot be reused."""
        self._reads: dict[int, tuple[ast.expr, frozenset[str]]] = {}
        """`_read_names` per expression (kept with it, so that its id is not reused): the same
        binding's value is read again for every statement whose names reach it."""
        self._sets: dict[frozenset[str], frozenset[str]] = {}
        """Each set of names `_words` and `_reads` hold, once: a statement's are mostly those of
        many others (`x = self.up(x)`), and the pass keeps one per statement of the file until it
        ends (6.5 of the 28 MiB a 20k-line file's analysis freed at its end were such sets)."""

    def segment_ended(self) -> None:
        """Drop the answers kept for the statements and scopes the walk of a segment met: each
        segment's walk asks about its own, and kept until the analysis ended, they were 4 MiB
        of a 20k-line file's peak. `_sets` stays: it is what the file's answers share."""
        self._typables.clear()
        self._words.clear()
        self._reads.clear()
        self._alive.clear()

    def wants(self, segment: Segment) -> bool:
        """Whether a segment no site trigger matches may still compute a typed array (`y = x @ w`
        reads `x`, which a placement typed): only in a file with a mesh with Explicit axes."""
        if not self.active:
            return False
        if any(
            getattr(stmt, "name", None) in self._mapped or _decorated_by_mapping(stmt)
            for stmt in segment.body
        ):
            return True
        scope = self.module.scope
        words = set(_WORD.findall(segment.text))
        return any(word in _MAKERS or self._typable(word, scope, 0) for word in words)

    @cached_property
    def _mapped(self) -> frozenset[str]:
        """Functions the module passes to `shard_map` or `vmap`: their bodies run on per-device
        blocks or elements of typed arrays, whatever words they contain."""
        return frozenset().union(*(first_arguments(self.module, wrapper) for wrapper in _MAPPING))

    def idle(self, context: Context) -> bool:
        """Whether `statement` does nothing in a body entered from `context`, whatever contexts
        its callers give it: no mesh of the file has Explicit axes, `context`'s mesh has none,
        and the module's text names nothing that makes a mesh current for its functions' callers
        (`_SETTING_WORDS`; the walker also checks the module calls no function that runs
        `jax.set_mesh`). The walker then need not search the callers of a function in which no
        call is worth visiting: it cost maxtext a sixth and tunix half of its evaluation steps."""
        return not self._may_set_a_mesh and self.inactive(context)

    @cached_property
    def _may_set_a_mesh(self) -> bool:
        text = self.module.source.text
        return any(word in text for word in _SETTING_WORDS)

    def inactive(self, context: Context) -> bool:
        """Whether `statement` does nothing in `context`: no mesh of the file has Explicit axes,
        nor has `context`'s mesh (no array here can be typed)."""
        mesh = context_mesh(context)
        return not self.active and (mesh is None or not has_explicit_axis(mesh.mesh.mesh))

    def statement(self, stmt: ast.stmt, frame: Frame, context: Context) -> None:
        value = _computed(stmt)
        if value is None or self.inactive(context):
            return
        mesh = context_mesh(context)
        if not self._may_be_typed(stmt, frame):
            return
        name = _target(stmt)
        if name is not None:
            self.names[id(value)] = name
        evaluator = self.evaluator
        previous = evaluator.state
        evaluator.context_mesh = mesh.mesh if mesh is not None else None
        evaluator.tracing = tracing(context)
        evaluator.context = context
        try:
            with devices_stated(evaluator, context.branches, context.count):
                result = evaluator.evaluate(value, frame)
        finally:
            evaluator.state = previous
        target = _target_node(stmt)
        if target is not None and isinstance(result, ArrayV) and result.typed is not None:
            if name is not None:
                self.names[id(target)] = name
            named(evaluator, frame, target, result.typed)

    def _may_be_typed(self, stmt: ast.stmt, frame: Frame) -> bool:
        """Whether evaluating the statement can give a typed array: it calls something that
        makes or places an array, or reads a name that may hold one (`_typable`, or a parameter
        bound to a typed array). Most statements of a model file do neither, and evaluating them
        again would cost as much as the rest of the analysis. Decided once per statement and
        scope from the names its value reads."""
        key = (id(stmt), id(frame.scope))
        words = self._words.get(key)
        if words is None:
            value = _computed(stmt)
            found = self._read_names(value) if value is not None else frozenset()
            reads_typed = any(w not in _MAKERS and self._typable(w, frame.scope, 0) for w in found)
            reached = self._reached(found, frame.scope)
            makes = (not found.isdisjoint(_MAKERS) and not _only_places(stmt)) or _INDEXES in reached
            words = _ANY if reads_typed or makes else self._once(frozenset(reached))
            self._words[key] = words
        return words is _ANY or any(_typed(frame.locals.get(w, _NOTHING)) is not None for w in words)

    def _read_names(self, value: ast.expr) -> frozenset[str]:
        known = self._reads.get(id(value))
        if known is None:
            known = self._reads[id(value)] = (value, self._once(_read_names(value)))
        return known[1]

    def _once(self, names: frozenset[str]) -> frozenset[str]:
        return self._sets.setdefault(names, names)

    def _reached(self, names: frozenset[str], scope: Scope) -> set[str]:
        """`names` and every name the function's own assignments to them read, transitively: a
        statement of a body that reads `s = b * 2`, `b = a + 1` depends on the parameter `a`."""
        reached = set(names)
        pending = list(names)
        while pending and len(reached) < _MAX_CHAIN * 8:
            for binding in scope.bindings.get(pending.pop(), ()):
                if binding.value is not None and binding.kind in _ASSIGNING:
                    new = self._read_names(binding.value) - reached
                    reached |= new
                    pending.extend(new)
        return reached

    def _typable(self, name: str, scope: Scope, depth: int) -> bool:
        """Whether some binding of `name` (in `scope` or around it) may bind a typed array, from
        the text of the bindings alone, so that the answer never depends on which segments were
        analysed first: a call that makes or places an array, or an expression that reads such a
        name. Cycles (`x = x + 1`) and long chains count as no."""
        key = (id(scope), name)
        known = self._typables.get(key)
        if known is not None:
            return known
        self._typables[key] = False  # while it is being decided: a cycle adds nothing
        holder: Scope | None = scope
        while holder is not None and name not in holder.bindings:
            holder = holder.parent
        found = False
        if holder is not None and depth < _MAX_CHAIN:
            for binding in holder.bindings[name]:
                if binding.value is None or binding.kind not in _ASSIGNING:
                    continue
                reads = self._read_names(binding.value)
                if not reads.isdisjoint(_MAKERS) or any(
                    self._typable(read, holder, depth + 1) for read in reads if read != name
                ):
                    found = True
                    break
        self._typables[key] = found
        if holder is not None:
            self._alive.append(holder)
        return found

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
        name = self._name_of(event)
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
            compiler_chosen=typed.type.compiler_chosen_axes,
            movement=_movement(event),
        )

    def _name_of(self, event: TypeEvent) -> str | None:
        """The name a typed result is bound to: the target of the assignment that computes it,
        read from the code wherever the statement is, not only when this pass evaluated it
        first: the result of a segment must not depend on which segments were analysed before
        it (another segment reading `hidden` reported `hidden = x @ w` unnamed when the
        statement's own segment was not analysed again after an edit)."""
        node = event.node
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return node.id
        found = self.names.get(id(node))
        if found is not None:
            return found
        segment = self._segment_at(event.span.line)
        if segment is None:
            return None
        kept = self._targets.get(id(segment))
        if kept is None:
            kept = self._targets[id(segment)] = (segment, _assigned_names(segment.body))
        return kept[1].get(id(node))

    def _segment_at(self, line: int) -> Segment | None:
        segments = self.module.source.segments
        index = bisect.bisect_right(segments, line, key=lambda segment: segment.first_line) - 1
        return segments[index] if index >= 0 else None


def merge_types(sites: Sequence[Site], placed: Sequence[Site]) -> list[Site]:
    """Each typed array once, and where a recognizer has a site for the same array (a placement,
    an `out_sharding=` result), its type folded into that site. A placement no recognizer saw
    (an array made without a sharding, replicated on the context mesh) is for hovers only. A
    segment reports the types it evaluated, also of statements elsewhere in the file whose values
    it reused, so this runs on the whole file's sites. `placed`: each site as `placed_type` gives
    it, kept with each segment's result (typing every placement of a 20k-line file again was a
    fifth of an edit's analysis); a site nothing folds into is that."""
    typed = [i for i, site in enumerate(sites) if site.kind in _TYPED and site.jax_type is not None]
    if not typed:
        return list(placed)
    lines = {sites[i].span.line for i in typed}
    recognized: dict[tuple[object, ...], int] = {}
    for index, site in enumerate(sites):
        if site.span.line in lines and site.kind not in _TYPED:
            recognized.setdefault((site.span, site.shape), index)
    folded: dict[int, Site] = {}
    dropped: set[int] = set()
    seen: set[tuple[object, ...]] = set()
    for index in typed:
        site = sites[index]
        key = (site.kind, site.span, site.jax_type, site.name)
        at = recognized.get((site.span, site.shape))
        if key in seen or at is not None:
            dropped.add(index)
        seen.add(key)
        if at is not None and folded.get(at, sites[at]).jax_type is None:
            folded[at] = replace(
                sites[at],
                jax_type=site.jax_type,
                type_sources=site.type_sources,
                compiler_chosen=site.compiler_chosen,
                movement=site.movement,
            )
    return [folded.get(i, placed[i]) for i in range(len(sites)) if i not in dropped]


_TYPED = frozenset({SiteKind.ARRAY_TYPE, SiteKind.ARRAY_NAME})
_PLACEMENTS = frozenset({SiteKind.DEVICE_PUT, SiteKind.RESHARD, SiteKind.CREATION})


def placed_type(site: Site) -> Site:
    """A placement on a mesh with Explicit axes that no evaluation typed (its array is read by no
    typed statement): its type is its layout's, with no evaluation needed."""
    layout, mesh = site.layout, site.mesh
    if site.jax_type is not None or site.kind not in _PLACEMENTS or layout is None or mesh is None:
        return site
    if mesh.fallback or not layout.is_valid or not has_explicit_axis(mesh.mesh) or site.symbolic_dims:
        return site
    typed = type_of_layout(layout)
    here = f"{site.kind.value} at line {site.span.line + 1}"
    axes = dict.fromkeys(a for dim in typed.spec for a in dim)
    return replace(
        site,
        jax_type=typed.jax_type,
        type_sources=tuple(f"{axis}: {here}" for axis in axes),
        compiler_chosen=typed.compiler_chosen_axes,
    )


def _assigned_names(body: Iterable[ast.stmt]) -> dict[int, str]:
    """The target's name of every assignment in `body` (nested ones too), by the node of its
    value and of its target."""
    found: dict[int, str] = {}
    for top in body:
        for node in ast.walk(top):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                target = _target_node(node)
                name = _target(node)
                if target is not None and name is not None:
                    found[id(node.value)] = found[id(target)] = name
    return found


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


def _only_places(stmt: ast.stmt) -> bool:
    """`x = jax.device_put(jnp.zeros(...), sharding)`: a placement or creation whose array comes
    from no typed name. Its recognizer already lays it out, and its type is computed when a
    statement reads `x`; evaluating it here too would double the cost of a model file's
    placements for nothing a hover lacks."""
    value = getattr(stmt, "value", None)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in _MAKERS


def _read_names(value: ast.expr) -> frozenset[str]:
    """The names and attribute names an expression reads (`jnp.zeros` reads `jnp` and `zeros`).
    Its own walk, not `ast.walk`: constants and contexts hold no name, and skipping them halves
    the cost of the pass on a model file."""
    names: set[str] = set()
    stack: list[ast.AST] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            stack.append(node.value)
        elif not isinstance(node, ast.Constant):
            for field in node._fields:
                child = getattr(node, field, None)
                if isinstance(child, ast.AST):
                    stack.append(child)
                elif isinstance(child, list):
                    stack.extend(item for item in child if isinstance(item, ast.AST))
    return frozenset(names)


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
    node = _target_node(stmt)
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
