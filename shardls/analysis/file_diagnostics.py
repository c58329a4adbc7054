"""The diagnostics of a file beyond its sites': a file too large to analyse (SH210), statements
that do not parse (SH209), malformed pragmas, the deprecated `with mesh:` (SH203), and the final
filtering of all of them by the settings, the suppression comments and the tests' expected raises.
"""

from __future__ import annotations

from collections.abc import Iterable

from shardls.analysis.expected_raises import expected_by_tests
from shardls.analysis.facts import Diagnostic, FileAnalysis, Span
from shardls.analysis.file_settings import file_device_count
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.settings import Settings
from shardls.analysis.suppressions import INVALID, apply_suppressions, diagnostic_order
from shardls.analysis.walker import Visit
from shardls.core import Severity


def reported(
    diagnostics: list[Diagnostic],
    settings: Settings,
    pragmas: Pragmas,
    module: ModuleInfo,
    complete: bool,
    assumed: str | None,
) -> tuple[tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
    """The enabled diagnostics, each once and in order, split into those reported and those a
    comment silences (`complete`: the whole file was analysed, so unused suppressions are known).
    Keys are tuples of plain values and each code is asked of the settings once: with `Span`
    objects and a question per diagnostic, this took 13 ms for a 20k-line file's 1,270."""
    on: dict[str, bool] = {}
    unique: dict[tuple[object, ...], Diagnostic] = {}
    for d in diagnostics:
        code = d.code
        if code not in on:
            on[code] = settings.enabled(code)
        if on[code]:
            span = d.span
            unique[(span.line, span.column, span.end_line, span.end_column, code, d.message)] = d
    enabled = sorted(_raised_where_built(unique.values()), key=diagnostic_order)
    split = apply_suppressions(pragmas, enabled, settings, module.source, complete, assumed)
    return expected_by_tests(split.kept, module.source), split.silenced


def _raised_where_built(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """`diagnostics` without the uses' reports of a problem already reported where the sharding
    is built (`Diagnostic.raised_at`): one mistake, one report, where JAX raises it."""
    found = list(diagnostics)
    at_build: dict[str, list[Span]] = {}
    for d in found:
        if d.raised_at is None:
            at_build.setdefault(d.code, []).append(d.span)
    return [
        d
        for d in found
        if d.raised_at is None or not any(span.within(d.raised_at) for span in at_build.get(d.code, ()))
    ]


def not_analysed(path: str, reason: str, settings: Settings) -> FileAnalysis:
    """A file beyond the size bounds: one SH210 saying why, nothing parsed. A warning: the
    bound is shardls's, not a problem of the code."""
    message = f"{reason}, so it is not analysed"
    found = (Diagnostic(Span(0, 0, 0, 0), "SH210", Severity.WARNING, message),)
    return FileAnalysis(
        path, (), (), found if settings.enabled("SH210") else (), file_device_count(Pragmas(), settings)
    )


def parse_diagnostics(module: ModuleInfo, pragmas: Pragmas) -> list[Diagnostic]:
    """Statements that do not parse (SH209, a warning: the rest of the file is analysed) and
    pragmas that cannot be read."""
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


def legacy_mesh_contexts(visits: list[tuple[Visit, str]]) -> list[Diagnostic]:
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
