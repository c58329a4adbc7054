"""The analysis of one file: text -> parse -> visits -> sites and diagnostics.

This is the only entry point the CLI and the language server use. It never executes, imports or
compiles the code it reads.
"""

from __future__ import annotations

import ast
import gc
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence

from shardls.analysis.budget_notes import file_budget_ended, statement_budget_ended
from shardls.analysis.evaluator import Evaluator, Limits, Reads
from shardls.analysis.facts import Diagnostic, FileAnalysis, Site, SiteKind, Span
from shardls.analysis.file_diagnostics import legacy_mesh_contexts, not_analysed, parse_diagnostics, reported
from shardls.analysis.file_settings import (
    assumed_device_count,
    fallback_mesh,
    file_device_count,
    file_environment,
)
from shardls.analysis.foreign_calls import ForeignCalls
from shardls.analysis.library import Library
from shardls.analysis.mesh_pass import MeshPassCache, find_meshes, pass_fingerprint
from shardls.analysis.method_units import MethodEdit, UnitResult, class_members, kept_units
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.pragmas import Pragmas, read_pragmas
from shardls.analysis.recognition import recognized, run_recognizer
from shardls.analysis.recognizers.meshes import MESH_CONSTRUCTORS
from shardls.analysis.segment_cache import (
    FileCache,
    R,
    SegmentResult,
    SiteOrder,
    Steps,
    read_keys,
    segment_result,
    site_order,
    units_result,
)
from shardls.analysis.settings import Settings
from shardls.analysis.sharded.events import TypeRecorder
from shardls.analysis.sharded.propagate import has_explicit_axis
from shardls.analysis.sharded.typing_pass import TypingPass, merge_types
from shardls.analysis.sharding_uses import with_uses
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.source import Segment
from shardls.analysis.walker import Visit, Walker
from shardls.analysis.workspace import WORKSPACE_MESH, Workspace, too_large
from shardls.analysis.workspace_meshes import WorkspaceMeshes

_CACHED_FILES = 64

Progress = Callable[[Callable[[], FileAnalysis]], None]
"""Told after each top-level statement is analysed how to get the analysis so far: the
diagnostics of the statements done, as they will be reported, and no sites. They are a subset of
the final ones (nothing later changes a statement's diagnostics; the suppressions that silence
nothing, the parse errors and the whole-file checks come at the end), for a server to publish
while a long file is analysed."""

DiagnosticProducer = Callable[[Workspace, str, str, Settings], list[Diagnostic]]
"""A whole-file check that a layer above the analysis computes (the model-memory check, SH213):
given the workspace, the file's path, its text and settings, its diagnostics. The caller passes
it in, so the analysis never imports the layers built on it."""


class Analyzer:
    """Analyses files of one workspace.

    Results are cached per top-level segment together with what they read (module-level names,
    imported modules, callers of the functions they contain), so after a one-line edit only the
    edited segment and the segments that depend on it are analysed again.
    """

    def __init__(
        self,
        workspace: Workspace | None = None,
        *,
        sharded_types: bool = True,
        producers: Sequence[DiagnosticProducer] = (),
    ) -> None:
        """`sharded_types`: infer the sharded type of computed arrays (Explicit axes) and report
        the errors JAX raises for them; off only to measure what it costs (benchmarks/).
        `producers`: whole-file checks of the layers above, whose diagnostics join the file's
        (filtered and suppressed like the others)."""
        self.workspace = workspace or Workspace()
        self.sharded_types = sharded_types
        self.producers = tuple(producers)
        self._files: OrderedDict[str, FileCache[SegmentResult]] = OrderedDict()
        self._mesh_passes: OrderedDict[str, MeshPassCache] = OrderedDict()
        """The mesh pass's outcomes of each segment (`mesh_pass`), kept like `_files`."""
        self._workspace_meshes = WorkspaceMeshes(self.workspace)

    def analyze(
        self, path: str, text: str, settings: Settings | None = None, progress: Progress | None = None
    ) -> FileAnalysis:
        """Analyse one file's text. The cyclic garbage collector is paused meanwhile: analysis
        allocates hundreds of thousands of AST nodes that would otherwise trigger repeated full
        collections (more than doubling the time); reference counting still frees garbage.
        An analysis that fails leaves no kept result of the file behind (some may rest on it)."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._analyze(path, text, settings or Settings(), progress)
        except BaseException:
            self._files.pop(path, None)
            self._mesh_passes.pop(path, None)
            raise
        finally:
            if was_enabled:
                gc.enable()

    def _analyze(self, path: str, text: str, settings: Settings, progress: Progress | None) -> FileAnalysis:
        oversized = too_large(text)
        if oversized is not None:
            return not_analysed(path, oversized, settings)
        module = self.workspace.module(path, text)
        pragmas = read_pragmas(module.source, bare_noqa=settings.bare_noqa)
        device_count = file_device_count(pragmas, settings)
        if pragmas.ignore_file:
            return FileAnalysis(path, (), (), (), device_count, tuple(module.source.errors))
        environment = file_environment(device_count, settings)
        default_dtype = environment.default_dtype
        library = Library(environment)
        evaluator = Evaluator(self.workspace, library, budget=Limits().file_budget(len(text)))
        builder = SiteBuilder(
            evaluator,
            library,
            path,
            device_count.count,
            device_count.source if device_count.assumed else None,
            device_count.default,
            fallback_mesh(pragmas, settings),
            [],
            default_dtype,
        )
        foreign = ForeignCalls(evaluator, self.workspace, module)
        walker = Walker(evaluator, module, *foreign.walker_tests())
        evaluator.typing = TypeRecorder() if self.sharded_types else None
        walker.meshes.evaluate_bindings_where_written()
        passes = _cache_of(
            self._mesh_passes,
            module,
            (
                settings,
                device_count,
                pragmas.mesh,
                pass_fingerprint(walker.meshes.global_meshes, walker.meshes.mesh_setters),
            ),
        )
        builder.file_meshes = find_meshes(evaluator, module, builder, (passes, self.workspace))
        typing = TypingPass(evaluator, module, any(has_explicit_axis(m.mesh) for m in builder.file_meshes))
        if evaluator.typing is not None:
            evaluator.typing.file_typed = typing.active
        if self.sharded_types:
            walker.type_with(typing.statement, typing.idle, typing.inactive, typing.wants)
        if not builder.file_meshes and builder.fallback_mesh is None:
            builder.fallback_mesh = self._workspace_meshes.only_mesh(path, environment, builder.device_count)
        mesh_diagnostics = list(builder.diagnostics)

        fingerprint = (
            settings,
            device_count,
            pragmas.mesh,
            tuple((m.mesh, m.span, m.name, m.source) for m in builder.file_meshes),
            tuple((c.how, c.mesh.mesh) for c in walker.meshes.global_meshes),
            walker.meshes.mesh_setters,  # a call of a new setter elsewhere changes what follows it
            builder.fallback_mesh,  # the workspace's only mesh changes with another file
            foreign.names(module),  # a module imported anew, or a helper that now places
        )
        cache: FileCache[SegmentResult] = _cache_of(self._files, module, fingerprint)
        stale = cache.stale(module, self.workspace)
        sites: list[Site] = []
        placed: list[Site] = []
        keys: list[SiteOrder] = []
        typed = False
        diagnostics: list[Diagnostic] = mesh_diagnostics
        assumed = assumed_device_count(pragmas, settings, device_count)

        def carries(segment: Segment, result: SegmentResult) -> bool:
            """A result of the same tree under another text holds for this one: the text still
            asks for the analysis, and no budget cut a question short under either text."""
            budget = evaluator.limits.statement_budget(len(segment.text))
            return result.steps.hold_under(budget, evaluator.limits.steps) and walker.wanted(segment)

        def so_far() -> FileAnalysis:
            kept, _ = reported(diagnostics, settings, pragmas, module, False, assumed)
            meshes = tuple(builder.file_meshes)
            return FileAnalysis(path, (), meshes, kept, device_count, tuple(module.source.errors))

        for segment in module.source.segments:
            if not segment.body:
                continue
            result = cache.kept(segment, stale, carries)
            if result is None:
                if not walker.wanted(segment):
                    continue
                replaced = cache.replaced(segment)
                result = self._analyze_segment(segment, walker, builder, foreign, typing, replaced)
                cache.keep(segment, result)
                _segment_ended(evaluator, typing)
            sites.extend(result.sites)
            placed.extend(result.placed)
            keys.extend(result.order)
            typed = typed or result.typed
            diagnostics.extend(result.diagnostics)
            if progress is not None:
                progress(so_far)
        cache.finish(module, module.source.segments)
        diagnostics += parse_diagnostics(module, pragmas)
        for produce in self.producers:
            diagnostics += produce(self.workspace, path, text, settings)
        complete = bool(evaluator.budget_left)
        kept, silenced = reported(diagnostics, settings, pragmas, module, complete, assumed)
        if typed:
            merged = with_uses(merge_types(sites, placed))  # a NamedSharding's site gets its uses in the file
            ordered = tuple(sorted((s for s in merged if s.kind is not SiteKind.ARRAY_NAME), key=site_order))
            names = tuple(sorted((s for s in merged if s.kind is SiteKind.ARRAY_NAME), key=site_order))
        else:
            # No typed result to fold: the sites are the placed ones, whose order each segment's
            # result keeps (`site_order` of each), so they are sorted without asking it again.
            merged = with_uses(placed)
            ordered = tuple(map(merged.__getitem__, sorted(range(len(keys)), key=keys.__getitem__)))
            names = ()
        return FileAnalysis(
            path,
            ordered,
            tuple(builder.file_meshes),
            kept,
            device_count,
            tuple(module.source.errors),
            suppressed=silenced,
            names=names,
        )

    def forget(self, path: str) -> None:
        """Drop what is kept of the file's analysis (an editor closed it): a later analysis of
        it starts afresh, as after an eviction."""
        self._files.pop(path, None)
        self._mesh_passes.pop(path, None)

    def index_workspace(self, settings: Settings) -> None:
        """Search the workspace for its meshes now, for the files checked with `settings` (and no
        device-count pragma of their own), so that the processes `check` forks to analyse the
        files inherit the result instead of each searching again. Only in a snapshot of the
        disk (elsewhere each file's search leaves that file out)."""
        if self.workspace.snapshot and settings.default_mesh is None:
            device_count = file_device_count(Pragmas(), settings)
            self._workspace_meshes.by_file("", file_environment(device_count, settings), device_count.count)

    def workspace_outcome(self, name: str, path: str, text: str, settings: Settings) -> object:
        """What the computation `name` over the workspace (`WORKSPACE_MESH`) gives now for the
        file `path` of this text, as its analysis would take it: for a cache to tell whether a
        change in what the computation read changed what the file's result rests on."""
        if name != WORKSPACE_MESH:
            raise ValueError(f"no workspace outcome named {name!r}")
        module = self.workspace.module(path, text)
        device_count = file_device_count(read_pragmas(module.source, bare_noqa=settings.bare_noqa), settings)
        return self._workspace_meshes.only_mesh(
            path, file_environment(device_count, settings), device_count.count
        )

    def _analyze_segment(
        self,
        segment: Segment,
        walker: Walker,
        builder: SiteBuilder,
        foreign: ForeignCalls,
        typing: TypingPass,
        replaced: tuple[SegmentResult, MethodEdit] | None = None,
    ) -> SegmentResult:
        """The segment's result; a class's one statement of its body at a time (`method_units`),
        only those an edit may have changed when `replaced` (the result of the segment this one
        replaced, and the edit, confined to one method) allows."""
        members = class_members(segment)
        if members is None:
            return self._analyze_whole(segment, walker, builder, foreign, typing)
        if replaced is not None and replaced[0].units is not None and replaced[0].steps.spent is not None:
            kept = kept_units(replaced[1], replaced[0].units, self.workspace)
            if kept is not None:
                again = self._analyze_units(segment, members, walker, builder, foreign, typing, kept)
                if again is not None:
                    return again
        made = self._analyze_units(segment, members, walker, builder, foreign, typing, None)
        assert made is not None
        return made

    def _analyze_whole(
        self,
        segment: Segment,
        walker: Walker,
        builder: SiteBuilder,
        foreign: ForeignCalls,
        typing: TypingPass,
    ) -> SegmentResult:
        evaluator = foreign.evaluator
        file_left = evaluator.budget_left
        exhausted = evaluator.exhausted
        budget = evaluator.limits.statement_budget(len(segment.text))
        reads = Reads()
        with evaluator.budget(budget):
            sites, diagnostics, ended = _walk(
                walker.visits([segment]), segment, builder, foreign, typing, reads
            )
            left = evaluator.steps_left_here
        if ended is not None and file_left != 0:
            diagnostics.append(_budget_note(evaluator, ended))
        steps = Steps(
            None if ended is not None or evaluator.exhausted != exhausted else budget - left, budget
        )
        return segment_result(walker.module, self.workspace, sites, diagnostics, reads, steps)

    def _analyze_units(
        self,
        segment: Segment,
        members: tuple[ast.stmt, ...],
        walker: Walker,
        builder: SiteBuilder,
        foreign: ForeignCalls,
        typing: TypingPass,
        kept: list[UnitResult | None] | None,
    ) -> SegmentResult | None:
        """A class segment's result, one statement of its body at a time under the segment's
        statement budget; with `kept` (what each statement keeps of the segment's previous
        result, None for those to analyse again), those keep theirs and what they spent is
        taken off the budget. None when, so, a budget ran out or came within a question of
        it (the whole class is then analysed again: a fresh analysis may run out elsewhere)."""
        evaluator = foreign.evaluator
        file_left = evaluator.budget_left
        exhausted = evaluator.exhausted
        budget = evaluator.limits.statement_budget(len(segment.text))
        spent_before = sum(unit.spent for unit in kept if unit is not None) if kept else 0
        units: list[UnitResult] = []
        ended: Span | None = None
        with evaluator.budget(budget - spent_before):
            for index, member in enumerate(members):
                unit = kept[index] if kept is not None else None
                if unit is not None:
                    units.append(unit)
                    continue
                reads = Reads()
                before = evaluator.steps_left_here
                visits = walker.member_visits(segment, member)
                sites, diagnostics, unit_ended = _walk(visits, segment, builder, foreign, typing, reads)
                ended = ended or unit_ended
                keys, modules = read_keys(walker.module, self.workspace, reads)
                units.append(
                    UnitResult(sites, diagnostics, keys, modules, before - evaluator.steps_left_here)
                )
            left = evaluator.steps_left_here
        complete = ended is None and evaluator.exhausted == exhausted
        steps = Steps(budget - left if complete else None, budget)
        if kept is not None and not steps.hold_under(budget, evaluator.limits.steps):
            return None
        extra = [_budget_note(evaluator, ended)] if ended is not None and file_left != 0 else []
        return units_result(tuple(units), extra, steps, complete)


def _walk(
    visits: Iterable[Visit],
    segment: Segment,
    builder: SiteBuilder,
    foreign: ForeignCalls,
    typing: TypingPass,
    reads: Reads,
) -> tuple[list[Site], list[Diagnostic], Span | None]:
    """The sites and diagnostics of the calls `visits` walks to (of `segment`), what the walk
    and the recognizers read (into `reads`), and where a budget ran out: the segment's first
    line when it did in the walk, otherwise the call whose recognizer it ran out in. The calls
    of helpers of other modules are placed last (`foreign_calls`), after the typing pass's
    report, whose events are those of this file's code only."""
    evaluator = foreign.evaluator
    evaluator.reads = reads
    builder.sites, builder.diagnostics = [], []
    recorder = evaluator.typing
    mark = recorder.mark() if recorder is not None else 0
    exhausted = evaluator.exhausted
    try:
        helper_calls: list[Visit] = []
        recognizable = recognized(_noting(visits, foreign, helper_calls), evaluator)
        ended = None if evaluator.exhausted == exhausted else _first_line(segment)
        for visit, qualname in recognizable:
            before = evaluator.exhausted
            if qualname not in MESH_CONSTRUCTORS:
                run_recognizer(builder, visit, qualname)
            if ended is None and evaluator.exhausted != before:
                ended = visit.frame.span(visit.call)
        if recorder is not None:
            typing.report(builder, recorder.since(mark))
        for visit in helper_calls:
            before = evaluator.exhausted
            foreign.place(builder, visit)
            if ended is None and evaluator.exhausted != before:
                ended = visit.frame.span(visit.call)
    finally:
        evaluator.reads = None
    return builder.sites, builder.diagnostics + legacy_mesh_contexts(recognizable), ended


def _segment_ended(evaluator: Evaluator, typing: TypingPass) -> None:
    """Free what the walk of a segment kept for itself as it ends, not when the analysis does:
    the evaluator's literals and the typing pass's answers per statement and scope (at 20k
    lines 10 of the 21 MiB the walk's peak held only until the analysis ended). Each is kept
    so that a loop or a walk of the same statement in another context asks once; a walk of a
    later segment asks about its own, and the results are the same (an edit's analysis walks
    some segments only, with memos that never held the others')."""
    evaluator.literals.clear()
    typing.segment_ended()


def _noting(visits: Iterable[Visit], foreign: ForeignCalls, helper_calls: list[Visit]) -> Iterator[Visit]:
    """`visits`, noting in `helper_calls` those that may call a helper of another module."""
    for visit in visits:
        if foreign.wants(visit):
            helper_calls.append(visit)
        yield visit


def _budget_note(evaluator: Evaluator, ended: Span) -> Diagnostic:
    """The note that a budget ran out at `ended`: the file's, or the statement's."""
    return (file_budget_ended if evaluator.budget_left == 0 else statement_budget_ended)(ended)


def _cache_of(
    caches: OrderedDict[str, FileCache[R]], module: ModuleInfo, fingerprint: object
) -> FileCache[R]:
    """The kept results of a file in `caches`, dropped when `fingerprint` (what they all rest
    on) changed other than by the lines an edit moved (`FileCache.fits`); the least recently
    analysed files' go beyond `_CACHED_FILES`."""
    path = module.path
    cache = caches.get(path)
    if cache is None or not cache.fits(fingerprint, module):
        cache = caches[path] = FileCache(fingerprint, path)
    caches.move_to_end(path)
    while len(caches) > _CACHED_FILES:
        caches.popitem(last=False)
    return cache


def _first_line(segment: Segment) -> Span:
    line = segment.first_line
    return Span(line, 0, line, len(segment.lines[0]) if segment.lines else 0)
