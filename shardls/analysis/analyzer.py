"""The analysis of one file: text -> parse -> visits -> sites and diagnostics.

This is the only entry point the CLI and the language server use. It never executes, imports or
compiles the code it reads.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import DeviceCount, Diagnostic, FileAnalysis, MeshFact, Span
from shardls.analysis.library import CallArgs, Environment, Library
from shardls.analysis.pragmas import Pragmas, read_pragmas
from shardls.analysis.recognizers.meshes import MESH_CONSTRUCTORS
from shardls.analysis.scopes import ModuleInfo
from shardls.analysis.settings import DEFAULT_DEVICE_COUNT, Settings
from shardls.analysis.sites import SiteBuilder, recognizer_for
from shardls.analysis.values import Const, DictV, Origin, Ref, Seq, Unknown, Value, options
from shardls.analysis.walker import Visit, Walker
from shardls.analysis.workspace import Workspace
from shardls.core import FLOAT32, Severity

_TRIGGER = re.compile(
    r"Mesh|mesh|PartitionSpec|\bPS?\(|Sharding|device_put|sharding|reshard|shard_map|with_partitioning|"
    r"nnx\.|Param\(|Linear|Embed|Conv|Einsum|Norm\(|Attention|ShapeDtypeStruct|jit"
)


class Analyzer:
    """Analyses files of one workspace; parsed segments and imported modules are cached."""

    def __init__(self, workspace: Workspace | None = None) -> None:
        self.workspace = workspace or Workspace()

    def analyze(self, path: str, text: str, settings: Settings | None = None) -> FileAnalysis:
        settings = settings or Settings()
        module = self.workspace.module(path, text)
        pragmas = read_pragmas(module.source.lines)
        device_count = _device_count(pragmas, settings)
        if pragmas.ignore_file:
            return FileAnalysis(path, (), (), (), device_count, tuple(module.source.errors))
        assumed_origin = Origin(f"{device_count.source}", assumed=device_count.assumed)
        environment = Environment(Const(device_count.count, origin=assumed_origin), settings.dtype or FLOAT32)
        library = Library(environment)
        evaluator = Evaluator(self.workspace, library)
        builder = SiteBuilder(
            evaluator,
            library,
            path,
            device_count.count,
            device_count.source if device_count.assumed else None,
            _fallback_mesh(pragmas, settings),
            [],
            settings.dtype or FLOAT32,
        )
        visits = [
            (visit, qualname)
            for visit, qualname in _recognized(Walker(evaluator, module, _TRIGGER), evaluator)
        ]
        for visit, qualname in visits:
            if qualname in MESH_CONSTRUCTORS:
                _run(builder, visit, qualname)
        builder.file_meshes = _unique(builder.meshes.values())
        for visit, qualname in visits:
            if qualname not in MESH_CONSTRUCTORS:
                _run(builder, visit, qualname)
        diagnostics = (
            builder.diagnostics + _parse_diagnostics(module, pragmas) + _legacy_mesh_contexts(visits)
        )
        kept = tuple(
            sorted(
                (
                    d
                    for d in diagnostics
                    if settings.enabled(d.code) and not pragmas.suppressed(d.span.line, d.code)
                ),
                key=lambda d: (d.span, d.code),
            )
        )
        sites = tuple(sorted(builder.sites, key=lambda s: (s.span, s.name or "")))
        return FileAnalysis(
            path, sites, tuple(builder.file_meshes), kept, device_count, tuple(module.source.errors)
        )


def _recognized(walker: Walker, evaluator: Evaluator) -> list[tuple[Visit, str]]:
    from shardls.analysis.recognizers import load

    load()
    found: list[tuple[Visit, str]] = []
    for visit in walker.visits():
        name = _final_name(visit.call.func)
        if name is None or name not in _interesting_names():
            continue
        func = evaluator.evaluate(visit.call.func, visit.frame)
        for option in options(func):
            if isinstance(option, Ref) and recognizer_for(option.qualname) is not None:
                found.append((visit, option.qualname))
                break
    return found


_NAMES: set[str] = set()


def _interesting_names() -> set[str]:
    if not _NAMES:
        from shardls.analysis import sites

        sites.recognizer_for("")
        _NAMES.update(name.rsplit(".", 1)[-1] for name in sites._RECOGNIZERS)
    return _NAMES


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
    args, kwargs = _arguments(evaluator, visit)
    recognizer(
        builder, visit, CallArgs(evaluator, builder.library, qualname, args, kwargs, visit.call, visit.frame)
    )


def _arguments(evaluator: Evaluator, visit: Visit) -> tuple[list[Value], dict[str, Value]]:
    frame: Frame = visit.frame
    args: list[Value] = []
    for arg in visit.call.args:
        if isinstance(arg, ast.Starred):
            spread = evaluator.iterate(evaluator.evaluate(arg.value, frame), frame)
            if isinstance(spread, Seq):
                args.extend(spread.items)
            else:
                args.append(Unknown("*args"))
            continue
        args.append(evaluator.evaluate(arg, frame))
    kwargs: dict[str, Value] = {}
    for keyword in visit.call.keywords:
        value = evaluator.evaluate(keyword.value, frame)
        if keyword.arg is not None:
            kwargs[keyword.arg] = value
        elif isinstance(value, DictV):
            for key, item in zip(value.keys, value.values):
                if isinstance(key, Const) and isinstance(key.value, str):
                    kwargs[key.value] = item
    return args, kwargs


def _device_count(pragmas: Pragmas, settings: Settings) -> DeviceCount:
    if pragmas.device_count is not None:
        count, line = pragmas.device_count
        return DeviceCount(count, f"pragma at line {line + 1}")
    if pragmas.device_hint is not None:
        count, line, what = pragmas.device_hint
        return DeviceCount(count, f"{what} at line {line + 1}")
    if settings.device_count is not None:
        return DeviceCount(settings.device_count, settings.device_count_source)
    return DeviceCount(DEFAULT_DEVICE_COUNT, "default device count; set it with # shardls: device-count=N")


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
        found.append(Diagnostic(Span(line, 0, line, width), "SH209", Severity.WARNING, message))
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
