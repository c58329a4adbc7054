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
answers alike (`SiteBuilder.answers_alike`); replaying the outcomes in order then leaves the
builder as a fresh pass does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import cast

from shardls.analysis.evaluator import Evaluator, Reads
from shardls.analysis.facts import Diagnostic, MeshFact
from shardls.analysis.line_shift import Shifter
from shardls.analysis.recognition import TRIGGER, recognized, run_recognizer
from shardls.analysis.recognizers.meshes import MESH_CONSTRUCTORS
from shardls.analysis.scopes import ModuleInfo
from shardls.analysis.segment_cache import FileCache, Steps, Version, read_keys
from shardls.analysis.sites import SharedState, SiteBuilder
from shardls.analysis.source import Segment
from shardls.analysis.walker import Walker
from shardls.analysis.walking.contexts import MeshContext
from shardls.analysis.walking.text_tests import NamedCalls
from shardls.analysis.workspace import MESH_TEXT, Workspace


@dataclass(frozen=True)
class MeshPassResult:
    """What the mesh pass's walk of one segment found and what it rested on."""

    shared: SharedState
    """What the walk asked of the builder's shared state and added to it."""
    diagnostics: tuple[Diagnostic, ...]
    reads: frozenset[tuple[str, str]]
    modules: tuple[tuple[str, Version], ...]
    steps: Steps

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
        return replace(self, shared=moved, diagnostics=diagnostics)


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
        if result is not None and builder.answers_alike(result.shared):
            builder.take(result.shared)
            builder.diagnostics.extend(result.diagnostics)
            continue
        result = walk_segment(walker, builder, segment, workspace)
        if cache is not None and result.steps.spent is not None:
            cache.keep(segment, result)
    if cache is not None:
        cache.finish(module, module.source.segments)
    return _unique(builder.meshes.values())


def walk_segment(
    walker: Walker, builder: SiteBuilder, segment: Segment, workspace: Workspace | None
) -> MeshPassResult:
    """Run the mesh constructors' recognizer on every call of theirs the segment makes, noting
    what it asked of and added to the builder's shared state and, given the `workspace` (for an
    outcome to be kept), what it read. The evaluator's context fields are left as they were
    found (a replayed outcome leaves them too). Tests count the walks an edit costs by this
    function."""
    evaluator = builder.evaluator
    shared, reads = SharedState(), Reads() if workspace is not None else None
    outer_reads, outer_shared = evaluator.reads, builder.shared
    context = evaluator.context_mesh, evaluator.tracing, evaluator.context
    evaluator.reads, builder.shared = (outer_reads if reads is None else reads), shared
    first = len(builder.diagnostics)
    exhausted = evaluator.exhausted
    budget = evaluator.limits.statement_budget(len(segment.text))
    try:
        with evaluator.budget(budget):
            for visit, qualname in recognized(walker.visits([segment]), evaluator):
                if qualname in MESH_CONSTRUCTORS:
                    run_recognizer(builder, visit, qualname)
            left = evaluator.steps_left_here
    finally:
        evaluator.reads, builder.shared = outer_reads, outer_shared
        evaluator.context_mesh, evaluator.tracing, evaluator.context = context
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
