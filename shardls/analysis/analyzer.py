"""The analysis of one file: text -> parse -> visits -> sites and diagnostics.

This is the only entry point the CLI and the language server use. It never executes, imports or
compiles the code it reads.
"""

from __future__ import annotations

import ast
import functools
import gc
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from shardls.analysis.budget_notes import file_budget_ended, statement_budget_ended
from shardls.analysis.evaluator import Evaluator, Limits, Reads
from shardls.analysis.expected_raises import expected_by_tests
from shardls.analysis.facts import DeviceCount, Diagnostic, FileAnalysis, MeshFact, Site, SiteKind, Span
from shardls.analysis.library import CallArgs, Environment, Library
from shardls.analysis.pragmas import Pragmas, read_pragmas
from shardls.analysis.recognizers.meshes import MESH_CONSTRUCTORS
from shardls.analysis.scopes import ModuleInfo, Scope
from shardls.analysis.settings import DEFAULT_DEVICE_COUNT, Settings
from shardls.analysis.sharded.events import TypeRecorder
from shardls.analysis.sharded.propagate import has_explicit_axis
from shardls.analysis.sharded.typing_pass import (
    TypingPass,
    context_mesh,
    merge_types,
    tracing,
)
from shardls.analysis.sites import SiteBuilder, callee_name, recognizer_for, wants
from shardls.analysis.source import Segment
from shardls.analysis.suppressions import INVALID, apply_suppressions
from shardls.analysis.values import Const, Origin, alternatives, options
from shardls.analysis.walker import Visit, Walker
from shardls.analysis.workspace import MESH_TEXT, WORKSPACE_MESH, Workspace, WorkspaceReads, too_large
from shardls.core import Severity, parse_dtype

_TRIGGER = re.compile(
    r"Mesh|mesh|PartitionSpec|\bPS?\(|Sharding|device_put|sharding|reshard|shard_map|with_partitioning|"
    r"nnx\.|Param\(|Linear|Embed|Conv|Einsum|Norm\(|Attention|ShapeDtypeStruct|jit|Dense|partitioning"
)

_CACHED_FILES = 64
WORKSPACE_SCAN_STEPS = 150_000
"""Evaluation steps one search for the workspace's only mesh may take over all the files it reads
(files read before cost nothing); beyond it the search gives no answer rather than a wrong one."""
_CACHED_MESH_SCANS = 2_048
"""Other files' meshes kept (one entry per file and environment), so that a file without a
mesh does not scan the workspace again on every keystroke."""


_WorkspaceMeshes = tuple[tuple[str, tuple[MeshFact, ...]], ...] | None
"""The meshes of the workspace's files, by file (None: the search ran out of steps)."""

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


@dataclass
class _SegmentResult:
    """The sites and diagnostics one segment produced, and what they depended on."""

    sites: list[Site]
    diagnostics: list[Diagnostic]
    names: tuple[tuple[str, str, tuple[tuple[int, int], ...]], ...]
    modules: tuple[tuple[str, ModuleInfo], ...]
    callers: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
    alive: tuple[object, ...]
    """Keeps the AST nodes whose ids the keys above use alive, so ids cannot be reused."""


@dataclass
class _FileCache:
    fingerprint: object
    segments: dict[tuple[int, int], _SegmentResult] = field(default_factory=dict)


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
        self._files: OrderedDict[str, _FileCache] = OrderedDict()
        self._workspace_scans: dict[tuple[int, Environment], tuple[_WorkspaceMeshes, WorkspaceReads]] = {}
        """Per snapshot and environment: the search's result, and what it read."""
        self._mesh_scans: OrderedDict[tuple[str, Environment], tuple[ModuleInfo, list[MeshFact]]] = (
            OrderedDict()
        )

    def analyze(
        self, path: str, text: str, settings: Settings | None = None, progress: Progress | None = None
    ) -> FileAnalysis:
        """Analyse one file's text. The cyclic garbage collector is paused meanwhile: analysis
        allocates hundreds of thousands of AST nodes that would otherwise trigger repeated full
        collections (more than doubling the time); reference counting still frees garbage."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._analyze(path, text, settings or Settings(), progress)
        finally:
            if was_enabled:
                gc.enable()

    def _analyze(self, path: str, text: str, settings: Settings, progress: Progress | None) -> FileAnalysis:
        oversized = too_large(text)
        if oversized is not None:
            return _not_analysed(path, oversized, settings)
        module = self.workspace.module(path, text)
        pragmas = read_pragmas(module.source, bare_noqa=settings.bare_noqa)
        device_count = _device_count(pragmas, settings)
        if pragmas.ignore_file:
            return FileAnalysis(path, (), (), (), device_count, tuple(module.source.errors))
        environment = _environment(device_count, settings)
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
            _fallback_mesh(pragmas, settings),
            [],
            default_dtype,
        )
        walker = Walker(evaluator, module, _TRIGGER, _calls_pattern())
        evaluator.typing = TypeRecorder() if self.sharded_types else None
        walker.meshes.evaluate_bindings_where_written()
        builder.file_meshes = _find_meshes(evaluator, module, builder)
        typing = TypingPass(evaluator, module, any(has_explicit_axis(m.mesh) for m in builder.file_meshes))
        if self.sharded_types:
            walker.on_statement = typing.statement
            walker.also = typing.wants
        if not builder.file_meshes and builder.fallback_mesh is None:
            builder.fallback_mesh = self._workspace_mesh(path, environment, builder.device_count)
        mesh_diagnostics = list(builder.diagnostics)

        fingerprint = (
            settings,
            device_count,
            pragmas.mesh,
            tuple((m.mesh, m.span, m.name, m.source) for m in builder.file_meshes),
            tuple((c.how, c.mesh.mesh) for c in walker.meshes.global_meshes),
            walker.meshes.mesh_setters,  # a call of a new setter elsewhere changes what follows it
        )
        cache = self._file_cache(path, fingerprint)
        fresh: dict[tuple[int, int], _SegmentResult] = {}
        sites: list[Site] = []
        diagnostics: list[Diagnostic] = mesh_diagnostics
        assumed = _assumed_count(pragmas, settings, device_count)

        def so_far() -> FileAnalysis:
            kept, _ = _reported(diagnostics, settings, pragmas, module, False, assumed)
            meshes = tuple(builder.file_meshes)
            return FileAnalysis(path, (), meshes, kept, device_count, tuple(module.source.errors))

        for segment in module.source.segments:
            if not segment.body or not walker.wanted(segment):
                continue
            key = (id(segment.body[0]), segment.first_line)
            result = cache.segments.get(key)
            if result is None or not self._still_valid(result, module):
                result = self._analyze_segment(segment, walker, builder, evaluator, typing)
            fresh[key] = result
            sites.extend(result.sites)
            diagnostics.extend(result.diagnostics)
            if progress is not None:
                progress(so_far)
        cache.segments = fresh
        diagnostics += _parse_diagnostics(module, pragmas)
        for produce in self.producers:
            diagnostics += produce(self.workspace, path, text, settings)
        complete = bool(evaluator.budget_left)
        kept, silenced = _reported(diagnostics, settings, pragmas, module, complete, assumed)
        merged = merge_types(sites)
        ordered = tuple(sorted((s for s in merged if s.kind is not SiteKind.ARRAY_NAME), key=_site_order))
        names = tuple(sorted((s for s in merged if s.kind is SiteKind.ARRAY_NAME), key=_site_order))
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

    def index_workspace(self, settings: Settings) -> None:
        """Search the workspace for its meshes now, for the files checked with `settings` (and no
        device-count pragma of their own), so that the processes `check` forks to analyse the
        files inherit the result instead of each searching again. Only in a snapshot of the
        disk (elsewhere each file's search leaves that file out)."""
        if self.workspace.snapshot and settings.default_mesh is None:
            device_count = _device_count(Pragmas(), settings)
            self._workspace_meshes("", _environment(device_count, settings), device_count.count)

    def workspace_outcome(self, name: str, path: str, text: str, settings: Settings) -> object:
        """What the computation `name` over the workspace (`WORKSPACE_MESH`) gives now for the
        file `path` of this text, as its analysis would take it: for a cache to tell whether a
        change in what the computation read changed what the file's result rests on."""
        if name != WORKSPACE_MESH:
            raise ValueError(f"no workspace outcome named {name!r}")
        module = self.workspace.module(path, text)
        device_count = _device_count(read_pragmas(module.source, bare_noqa=settings.bare_noqa), settings)
        return self._workspace_mesh(path, _environment(device_count, settings), device_count.count)

    def _workspace_mesh(self, path: str, environment: Environment, device_count: int) -> MeshFact | None:
        """The only mesh built anywhere in the workspace, for a file that builds none itself
        (a model file next to the training script that makes the mesh). The analysis under way
        rests on this result, not on every file the search read (`Workspace.note_outcome`)."""
        scanned, reads = self._workspace_meshes(path, environment, device_count)
        found = [mesh for other, meshes in scanned or () if not _same_file(other, path) for mesh in meshes]
        result = None
        if scanned is not None and len(found) == 1:
            mesh = found[0]
            where = f"{os.path.relpath(mesh.path or '', os.path.dirname(path))}:{(mesh.span.line + 1) if mesh.span else '?'}"
            result = replace(mesh, selection=f"the only mesh in the workspace ({where})", fallback=True)
        self.workspace.note_outcome(WORKSPACE_MESH, reads, result)
        return result

    def _workspace_meshes(
        self, path: str, environment: Environment, device_count: int
    ) -> tuple[_WorkspaceMeshes, WorkspaceReads]:
        """The meshes of the workspace's files that build some, by file, until no file can have
        exactly one mesh elsewhere (None when WORKSPACE_SCAN_STEPS ran out first), and what the
        search read. In a snapshot of the disk (a `check` run) this is found once for all files,
        which keeps `check` linear in files; otherwise `path`, the file being analysed, is left
        out."""
        key = (self.workspace.generation, environment)
        if self.workspace.snapshot and key in self._workspace_scans:
            return self._workspace_scans[key]
        with self.workspace.apart() as reads:
            result = self._scan_workspace(path, environment, device_count)
        if self.workspace.snapshot:
            if any(generation != key[0] for generation, _ in self._workspace_scans):
                self._workspace_scans.clear()  # an earlier run's
            self._workspace_scans[key] = (result, reads)
        return result, reads

    def _scan_workspace(self, path: str, environment: Environment, device_count: int) -> _WorkspaceMeshes:
        by_file: list[tuple[str, tuple[MeshFact, ...]]] = []
        result: _WorkspaceMeshes = None
        left = WORKSPACE_SCAN_STEPS
        for other in self.workspace.files_mentioning(MESH_TEXT):
            text = self.workspace.text_of(other)
            if text is None or (not self.workspace.snapshot and _same_file(other, path)):
                continue
            meshes, spent = self._meshes_of(other, text, environment, device_count, left)
            left -= spent
            if meshes is None:
                break
            if meshes:
                by_file.append((other, tuple(meshes)))
                counts = [len(found) for _, found in by_file]
                if sum(counts) - max(counts) >= 2:
                    result = tuple(by_file)
                    break
        else:
            result = tuple(by_file)
        return result

    def _meshes_of(
        self, path: str, text: str, environment: Environment, device_count: int, budget: int
    ) -> tuple[list[MeshFact] | None, int]:
        """The meshes another file builds and the steps that took, computed once per text of that
        file (a change only in what it imports is seen when the file next changes); None when
        `budget` (or the file's own) ran out first."""
        module = self.workspace.module(path, text)
        key = (path, environment)
        cached = self._mesh_scans.get(key)
        if cached is not None and cached[0] is module:
            self._mesh_scans.move_to_end(key)
            return cached[1], 0
        library = Library(environment)
        allowed = min(budget, Limits().file_budget(len(text)))
        evaluator = Evaluator(self.workspace, library, budget=allowed)
        scan = SiteBuilder(evaluator, library, path, device_count, None, False, None, [])
        meshes = _find_meshes(evaluator, module, scan)
        spent = allowed - (evaluator.budget_left or 0)
        if not evaluator.budget_left:
            return None, spent
        self._mesh_scans[key] = (module, meshes)
        while len(self._mesh_scans) > _CACHED_MESH_SCANS:
            self._mesh_scans.popitem(last=False)
        return meshes, spent

    def _file_cache(self, path: str, fingerprint: object) -> _FileCache:
        cache = self._files.get(path)
        if cache is None or cache.fingerprint != fingerprint:
            cache = _FileCache(fingerprint)
            self._files[path] = cache
        self._files.move_to_end(path)
        while len(self._files) > _CACHED_FILES:
            self._files.popitem(last=False)
        return cache

    def _analyze_segment(
        self,
        segment: Segment,
        walker: Walker,
        builder: SiteBuilder,
        evaluator: Evaluator,
        typing: TypingPass,
    ) -> _SegmentResult:
        reads = Reads()
        evaluator.reads = reads
        builder.sites, builder.diagnostics = [], []
        recorder = evaluator.typing
        mark = recorder.mark() if recorder is not None else 0
        file_left = evaluator.budget_left
        exhausted = evaluator.exhausted
        try:
            with evaluator.budget(evaluator.limits.statement_budget(len(segment.text))):
                visits = _recognized(walker.visits([segment]), evaluator)
                ended = None if evaluator.exhausted == exhausted else _first_line(segment)
                for visit, qualname in visits:
                    before = evaluator.exhausted
                    if qualname not in MESH_CONSTRUCTORS:
                        _run(builder, visit, qualname)
                    if ended is None and evaluator.exhausted != before:
                        ended = visit.frame.span(visit.call)
                if recorder is not None:
                    typing.report(builder, recorder.since(mark))
                diagnostics = builder.diagnostics + _legacy_mesh_contexts(visits)
            if ended is not None and file_left != 0:
                file_ended = evaluator.budget_left == 0
                diagnostics.append((file_budget_ended if file_ended else statement_budget_ended)(ended))
        finally:
            evaluator.reads = None
        module = walker.module
        alive: list[object] = []
        names = []
        for path, name in sorted(reads.names):
            scope = self._scope_of(path, module)
            if scope is not None:
                names.append((path, name, scope.binding_key(name)))
                alive.extend(b.node for b in scope.bindings.get(name, ()))
        callers = []
        for callee in sorted(reads.callees):
            callers.append((callee, _callers_key(module, callee)))
            alive.extend(module.source.segments[i].body for i in module.call_index.get(callee, ()))
        return _SegmentResult(
            builder.sites,
            diagnostics,
            tuple(names),
            tuple(reads.modules.items()),
            tuple(callers),
            tuple(alive),
        )

    def _scope_of(self, path: str, module: ModuleInfo) -> Scope | None:
        if path == module.path:
            return module.scope
        current = self.workspace.current(path)
        return current.scope if current is not None else None

    def _still_valid(self, result: _SegmentResult, module: ModuleInfo) -> bool:
        for path, imported in result.modules:
            if self.workspace.current(path) is not imported:
                return False
        for path, name, key in result.names:
            scope = self._scope_of(path, module)
            if scope is None or scope.binding_key(name) != key:
                return False
        return all(_callers_key(module, callee) == key for callee, key in result.callers)


def _reported(
    diagnostics: list[Diagnostic],
    settings: Settings,
    pragmas: Pragmas,
    module: ModuleInfo,
    complete: bool,
    assumed: str | None,
) -> tuple[tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
    """The enabled diagnostics, each once and in order, split into those reported and those a
    comment silences (`complete`: the whole file was analysed, so unused suppressions are known)."""
    enabled = sorted(
        {(d.span, d.code, d.message): d for d in diagnostics if settings.enabled(d.code)}.values(),
        key=lambda d: (d.span, d.code),
    )
    split = apply_suppressions(pragmas, enabled, settings, module.source, complete, assumed)
    return expected_by_tests(split.kept, module.source), split.silenced


def _first_line(segment: Segment) -> Span:
    line = segment.first_line
    return Span(line, 0, line, len(segment.lines[0]) if segment.lines else 0)


def _site_order(site: Site) -> tuple[Span, str]:
    return site.span, site.name or ""


def _callers_key(module: ModuleInfo, callee: str) -> tuple[tuple[int, int], ...]:
    segments = module.source.segments
    return tuple((id(segments[i].body), segments[i].first_line) for i in module.call_index.get(callee, ()))


def _find_meshes(evaluator: Evaluator, module: ModuleInfo, builder: SiteBuilder) -> list[MeshFact]:
    """The meshes a module builds (their problems reported by the builder). The walk visits only
    statements that may call a mesh constructor, so it searches the callers of the functions
    that do, not of every function that shares a segment with the word "mesh"."""
    walker = Walker(evaluator, module, _TRIGGER, _mesh_calls_pattern())
    for segment in module.source.segments:
        if not MESH_TEXT.search(segment.text):
            continue
        with evaluator.budget(evaluator.limits.statement_budget(len(segment.text))):
            for visit, qualname in _recognized(walker.visits([segment]), evaluator):
                if qualname in MESH_CONSTRUCTORS:
                    _run(builder, visit, qualname)
    return _unique(builder.meshes.values())


def _recognized(visits: Iterable[Visit], evaluator: Evaluator) -> list[tuple[Visit, str]]:
    """The calls a recognizer handles, with the canonical name of the function called."""
    from shardls.analysis.recognizers import load

    load()
    found: list[tuple[Visit, str]] = []
    for visit in visits:
        if not _may_be_recognized(visit.call):
            continue
        func = evaluator.evaluate(visit.call.func, visit.frame)
        for option in options(func):
            name = callee_name(option)
            if (
                name is not None
                and recognizer_for(name) is not None
                and wants(name, nested=visit.parent is not None)
            ):
                found.append((visit, name))
                break
    return found


def _may_be_recognized(call: ast.Call) -> bool:
    """Whether the callee is worth evaluating (a cheap test of the syntax): it has a name some
    recognizer handles, it is made by a call (`he_normal()(key, shape, dtype, P(...))`), or the
    call sets `out_sharding=`."""
    name = _final_name(call.func)
    if name is not None and name in _interesting_names():
        return True
    return isinstance(call.func, ast.Call) or any(k.arg == "out_sharding" for k in call.keywords)


_NAMES: set[str] = set()


def _interesting_names() -> set[str]:
    if not _NAMES:
        from shardls.analysis import sites

        sites.recognizer_for("")
        _NAMES.update(name.rsplit(".", 1)[-1] for name in sites._RECOGNIZERS)
    return _NAMES


@functools.lru_cache(maxsize=1)
def _calls_pattern() -> re.Pattern[str]:
    """Statements worth walking: they call a name some recognizer handles, call what a call
    returned, or set `out_sharding=` (see `_may_be_recognized`)."""
    names = sorted(_interesting_names() | {"set_mesh"})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\(|\)\s*\(|\bout_sharding\s*=")


@functools.lru_cache(maxsize=1)
def _mesh_calls_pattern() -> re.Pattern[str]:
    """Statements that may call a mesh constructor (`_may_be_recognized` for those names only)."""
    names = sorted({qualname.rsplit(".", 1)[-1] for qualname in MESH_CONSTRUCTORS})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\(|\)\s*\(|\bout_sharding\s*=")


def _final_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _run(builder: SiteBuilder, visit: Visit, qualname: str) -> None:
    recognizer = recognizer_for(qualname)
    if recognizer is None:
        return
    evaluator = builder.evaluator
    mesh = context_mesh(visit.context)
    evaluator.context_mesh = mesh.mesh if mesh is not None else None
    evaluator.tracing = tracing(visit.context)
    evaluator.context = visit.context
    args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
    names = list(kwargs)
    # A condition the analysis cannot decide gives one layout per outcome.
    for combination in alternatives(args + [kwargs[name] for name in names]):
        chosen_args = list(combination[: len(args)])
        chosen_kwargs = dict(zip(names, combination[len(args) :], strict=True))
        call = CallArgs(
            evaluator, builder.library, qualname, chosen_args, chosen_kwargs, visit.call, visit.frame
        )
        recognizer(builder, visit, call)


def _device_count(pragmas: Pragmas, settings: Settings) -> DeviceCount:
    if pragmas.device_count is not None:
        count, line = pragmas.device_count
        return DeviceCount(count, f"pragma at line {line + 1}")
    if pragmas.device_hint is not None:
        count, line, what = pragmas.device_hint
        return DeviceCount(count, f"{what} at line {line + 1}")
    if settings.device_count is not None:
        return DeviceCount(settings.device_count, settings.device_count_source)
    return DeviceCount(
        DEFAULT_DEVICE_COUNT, "default device count; set it with # shardls: device-count=N", default=True
    )


def _environment(device_count: DeviceCount, settings: Settings) -> Environment:
    """What the library models JAX with: the device count (an assumption when it is the
    default), the default dtype and x64."""
    assumed_origin = Origin(
        device_count.source,
        assumption=f"{device_count.count} devices ({device_count.source})" if device_count.default else None,
    )
    default_dtype = settings.dtype or parse_dtype("float64" if settings.x64 else "float32", x64=settings.x64)
    return Environment(Const(device_count.count, origin=assumed_origin), default_dtype, settings.x64)


def _assumed_count(pragmas: Pragmas, settings: Settings, device_count: DeviceCount) -> str | None:
    """The device count as an assumption, when neither the file nor a setting states it."""
    stated = pragmas.device_count or pragmas.device_hint or settings.device_count is not None
    return None if stated else f"the default device count ({device_count.count})"


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file (links resolved; a file deleted meanwhile is not an error)."""
    return os.path.realpath(first) == os.path.realpath(second)


def _fallback_mesh(pragmas: Pragmas, settings: Settings) -> MeshFact | None:
    if pragmas.mesh is not None:
        mesh, line = pragmas.mesh
        return MeshFact(mesh, None, None, f"# shardls: mesh pragma at line {line + 1}", "the mesh pragma")
    if settings.default_mesh is not None:
        return MeshFact(
            settings.default_mesh, None, None, settings.default_mesh_source, settings.default_mesh_source
        )
    return None


def _unique(facts: Iterable[MeshFact]) -> list[MeshFact]:
    seen: dict[object, MeshFact] = {}
    for fact in facts:
        seen.setdefault(fact.span, fact)
    return sorted(seen.values(), key=lambda f: (f.span is None, f.span))


def _not_analysed(path: str, reason: str, settings: Settings) -> FileAnalysis:
    """A file beyond the size bounds: one SH210 saying why, nothing parsed. A warning: the
    bound is shardls's, not a problem of the code."""
    message = f"{reason}, so it is not analysed"
    found = (Diagnostic(Span(0, 0, 0, 0), "SH210", Severity.WARNING, message),)
    return FileAnalysis(
        path, (), (), found if settings.enabled("SH210") else (), _device_count(Pragmas(), settings)
    )


def _parse_diagnostics(module: ModuleInfo, pragmas: Pragmas) -> list[Diagnostic]:
    found = []
    lines = module.source.lines
    for line, message in module.source.errors:
        width = len(lines[line]) if line < len(lines) else 0
        found.append(
            Diagnostic(
                Span(line, 0, line, width),
                "SH209",
                Severity.WARNING,
                f"{message}; shardls skips this statement until it parses (the rest of the file is analysed)",
            )
        )
    for line, message in pragmas.errors:
        width = len(lines[line]) if line < len(lines) else 0
        found.append(Diagnostic(Span(line, 0, line, width), INVALID, Severity.ERROR, message))
    return found


def _legacy_mesh_contexts(visits: list[tuple[Visit, str]]) -> list[Diagnostic]:
    """`with mesh:` is deprecated and does not serve device_put, jit or Flax: say so where it is written."""
    found: dict[Span, Diagnostic] = {}
    for visit, _ in visits:
        for context in visit.context.meshes:
            if context.legacy:
                found.setdefault(
                    context.span,
                    Diagnostic(
                        context.span,
                        "SH203",
                        Severity.WARNING,
                        "`with mesh:` is deprecated and only serves with_sharding_constraint; "
                        "use `with jax.set_mesh(mesh):`",
                        deprecated=True,
                    ),
                )
    return list(found.values())
