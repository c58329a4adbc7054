"""The mesh pass: the meshes a file builds, found by a walk that visits only the calls of mesh
constructors, and kept per top-level segment from one analysis to the next.

Every analysis needs the file's meshes before anything else (they choose the mesh of a site and
are part of what the file's kept results rest on), and the walk that finds them searches the
callers of every function building one: over a whole file, about half of what an edit of
maxtext's `layers/moe.py` cost once no segment was analysed again. So each segment's outcome is
kept the way `FileCache` keeps segment results, by segment object with what its walk read
(names, searched callees, other modules), and an edit walks again only the segments it changed
and their readers.

The segments of one pass share the builder's state: the first segment to meet a mesh makes its
fact and reports its problems, later ones find it made. A kept outcome therefore also holds what
its walk asked of that state and what it added (`SharedState`), and stands only while the state
answers alike (`SiteRecord.answers_alike`); replaying the outcomes in order then leaves the
builder as a fresh pass does.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import cast

from shardls.analysis.evaluator import Evaluator, Reads
from shardls.analysis.facts import Diagnostic, MeshFact
from shardls.analysis.line_shift import Shifter
from shardls.analysis.method_units import MethodEdit, class_members, kept_units
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.recognition import TRIGGER, recognized, run_recognizer
from shardls.analysis.recognizers.meshes import MESH_CONSTRUCTORS
from shardls.analysis.segment_cache import FileCache, Steps, read_keys
from shardls.analysis.site_record import SharedState
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.source import Segment
from shardls.analysis.walker import Visit, Walker
from shardls.analysis.walking.contexts import MeshContext
from shardls.analysis.walking.text_tests import NamedCalls
from shardls.analysis.workspace import MESH_TEXT, Version, Workspace


@dataclass(frozen=True)
class MeshPassResult:
    """What the mesh pass's walk of one segment found and what it rested on."""

    shared: SharedState
    """What the walk asked of the builder's shared state and added to it."""
    diagnostics: tuple[Diagnostic, ...]
    reads: frozenset[tuple[str, str]]
    modules: tuple[tuple[str, Version], ...]
    steps: Steps
    units: tuple[MeshPassResult, ...] | None = None
    """The outcomes of the statements of a class's body walked one at a time (`method_units`),
    which the fields above join (None: the segment was walked as a whole)."""

    def moved(self, shifter: Shifter) -> MeshPassResult:
        trusted = not self.modules

        def key(value: object) -> object:
            """A mesh's key is `(path, span, mesh)`: the span is that path's."""
            foreign = isinstance(value, tuple) and isinstance(value[0], str) and value[0] != shifter.path
            return shifter.value(value, trusted, foreign)

        shared = self.shared
        moved = SharedState(
            {
                key(k): cast(MeshFact | None, shifter.value(v, trusted))
                for k, v in shared.meshes_asked.items()
            },
            {cast(tuple[object, ...], key(k)): v for k, v in shared.seen_asked.items()},
            [(key(k), cast(MeshFact, shifter.value(v, trusted))) for k, v in shared.meshes_added],
            [cast(tuple[object, ...], key(k)) for k in shared.seen_added],
        )
        diagnostics = cast(tuple[Diagnostic, ...], shifter.value(self.diagnostics, trusted))
        units = None if self.units is None else tuple(unit.moved(shifter) for unit in self.units)
        return replace(self, shared=moved, diagnostics=diagnostics, units=units)

    @property
    def spent(self) -> int:
        """The steps the walk took (0 when a budget ran out: it is not kept then)."""
        return self.steps.spent or 0


MeshPassCache = FileCache[MeshPassResult]


def find_meshes(
    evaluator: Evaluator,
    module: ModuleInfo,
    builder: SiteBuilder,
    kept: tuple[MeshPassCache, Workspace] | None = None,
) -> list[MeshFact]:
    """The meshes a module builds (their problems reported by the builder). The walk visits only
    statements that may call a mesh constructor, so it searches the callers of the functions
    that do, not of every function that shares a segment with the word "mesh". With `kept` (the
    file's kept outcomes and its workspace), a segment whose kept outcome still holds is not
    walked again."""
    walker = Walker(evaluator, module, TRIGGER, _mesh_calls_pattern())
    cache, workspace = kept if kept is not None else (None, None)
    stale = cache.stale(module, workspace) if cache is not None and workspace is not None else set()

    def carries(segment: Segment, result: MeshPassResult) -> bool:
        """An outcome of the same tree under another text holds when no budget cut it short
        under either text's statement budget (the text's own tests are made before)."""
        budget = evaluator.limits.statement_budget(len(segment.text))
        return result.steps.hold_under(budget, evaluator.limits.steps)

    for segment in module.source.segments:
        if not segment.body or not _mentions_meshes(segment.text) or not walker.wanted(segment):
            continue
        result = cache.kept(segment, stale, carries) if cache is not None else None
        if result is not None and builder.record.answers_alike(result.shared):
            builder.record.take(result.shared)
            builder.diagnostics.extend(result.diagnostics)
            continue
        members = class_members(segment)
        if members is None:
            result = walk_segment(walker, builder, segment, workspace)
        else:
            replaced = cache.replaced(segment) if cache is not None else None
            result = walk_members(walker, builder, segment, members, workspace, replaced)
        if cache is not None and result.steps.spent is not None:
            cache.keep(segment, result)
    if cache is not None:
        cache.finish(module, module.source.segments)
    return _unique(builder.record.meshes.values())


def walk_segment(
    walker: Walker, builder: SiteBuilder, segment: Segment, workspace: Workspace | None
) -> MeshPassResult:
    """Run the mesh constructors' recognizer on every call of theirs the segment makes, noting
    what it asked of and added to the builder's shared state and, given the `workspace` (for an
    outcome to be kept), what it read. The evaluator's context fields are left as they were
    found (a replayed outcome leaves them too). Tests count the walks an edit costs by this
    function."""
    budget = builder.evaluator.limits.statement_budget(len(segment.text))
    return _walk(walker, builder, walker.visits([segment]), budget, workspace)


def walk_members(
    walker: Walker,
    builder: SiteBuilder,
    segment: Segment,
    members: tuple[ast.stmt, ...],
    workspace: Workspace | None,
    replaced: tuple[MeshPassResult, MethodEdit] | None,
) -> MeshPassResult:
    """`walk_segment` of a class segment, one statement of its body at a time under the
    segment's budget; with `replaced` (the outcome of the segment it replaced, and the edit,
    confined to one method), a statement the edit cannot have changed (`kept_units`) takes
    its kept outcome while the shared state answers it alike. When what they spent together
    comes within a question of the budget, the segment is walked again whole (from the state
    it found), as a fresh pass would."""
    evaluator = builder.evaluator
    budget = evaluator.limits.statement_budget(len(segment.text))
    kept = None
    if replaced is not None and replaced[0].units is not None and workspace is not None:
        kept = kept_units(replaced[1], replaced[0].units, workspace)
    state, first = builder.record.checkpoint(), len(builder.diagnostics)
    units: list[MeshPassResult] = []
    spent = 0
    for index, member in enumerate(members):
        unit = kept[index] if kept is not None else None
        if unit is not None and builder.record.answers_alike(unit.shared):
            builder.record.take(unit.shared)
            builder.diagnostics.extend(unit.diagnostics)
        else:
            visits = walker.member_visits(segment, member)
            unit = _walk(walker, builder, visits, budget - spent, workspace)
        units.append(unit)
        spent += unit.spent
        if unit.steps.spent is None:
            break
    complete = len(units) == len(members) and all(unit.steps.spent is not None for unit in units)
    steps = Steps(spent if complete else None, budget)
    if kept is not None and not steps.hold_under(budget, evaluator.limits.steps):
        builder.record.restore(state)
        del builder.diagnostics[first:]
        return walk_members(walker, builder, segment, members, workspace, None)
    return _joined(units, steps, complete)


def _joined(units: list[MeshPassResult], steps: Steps, complete: bool) -> MeshPassResult:
    """The outcome of a segment walked one statement of its class's body at a time: what the
    first statement to ask something of the shared state got, what all added, in order."""
    shared = SharedState()
    for unit in units:
        for key, fact in unit.shared.meshes_asked.items():
            shared.meshes_asked.setdefault(key, fact)
        for seen_key, seen in unit.shared.seen_asked.items():
            shared.seen_asked.setdefault(seen_key, seen)
        shared.meshes_added += unit.shared.meshes_added
        shared.seen_added += unit.shared.seen_added
    diagnostics = tuple(d for unit in units for d in unit.diagnostics)
    reads = frozenset().union(*(unit.reads for unit in units))
    modules = tuple({path: version for unit in units for path, version in unit.modules}.items())
    return MeshPassResult(shared, diagnostics, reads, modules, steps, tuple(units) if complete else None)


def _walk(
    walker: Walker, builder: SiteBuilder, visits: Iterable[Visit], budget: int, workspace: Workspace | None
) -> MeshPassResult:
    """`walk_segment` of the calls `visits` walks to, under `budget`."""
    evaluator = builder.evaluator
    shared, reads = SharedState(), Reads() if workspace is not None else None
    outer_reads, outer_shared = evaluator.reads, builder.record.shared
    state = evaluator.state
    evaluator.reads, builder.record.shared = (outer_reads if reads is None else reads), shared
    first = len(builder.diagnostics)
    exhausted = evaluator.exhausted
    try:
        with evaluator.budget(budget):
            for visit, qualname in recognized(visits, evaluator):
                if qualname in MESH_CONSTRUCTORS:
                    run_recognizer(builder, visit, qualname)
            left = evaluator.steps_left_here
    finally:
        evaluator.reads, builder.record.shared = outer_reads, outer_shared
        evaluator.state = state
        if outer_reads is not None and reads is not None:
            outer_reads.add(reads)
    steps = Steps(budget - left if evaluator.exhausted == exhausted else None, budget)
    keys, modules = (
        read_keys(walker.module, workspace, reads)
        if reads is not None and workspace is not None
        else _NOTHING
    )
    return MeshPassResult(shared, tuple(builder.diagnostics[first:]), keys, modules, steps)


_NOTHING: tuple[frozenset[tuple[str, str]], tuple[tuple[str, Version], ...]] = (frozenset(), ())


def pass_fingerprint(global_meshes: tuple[MeshContext, ...], mesh_setters: frozenset[str]) -> object:
    """What every segment's walk rests on of the module's `jax.set_mesh` statements: the meshes
    they make current (by value: each analysis evaluates them anew) and the functions that run
    one. The caller adds the settings and device count."""
    return (
        tuple(
            (c.how, c.span, c.legacy, c.in_turn, tuple(getattr(c.mesh, f.name) for f in fields(c.mesh)))
            for c in global_meshes
        ),
        mesh_setters,
    )


@functools.lru_cache(maxsize=20_000)
def _mentions_meshes(text: str) -> bool:
    """Whether a segment's text may build a mesh, by text: the segments a file keeps from one
    edit to the next are the same strings, and searching all of them again took a tenth of an
    edit's analysis of a 20k-line file."""
    return MESH_TEXT.search(text) is not None


@functools.lru_cache(maxsize=1)
def _mesh_calls_pattern() -> NamedCalls:
    """Statements that may call a mesh constructor (`_may_be_recognized` for those names only)."""
    return NamedCalls.of(qualname.rsplit(".", 1)[-1] for qualname in MESH_CONSTRUCTORS)


def _unique(facts: Iterable[MeshFact]) -> list[MeshFact]:
    seen: dict[object, MeshFact] = {}
    for fact in facts:
        seen.setdefault(fact.span, fact)
    return sorted(seen.values(), key=lambda f: (f.span is None, f.span))
