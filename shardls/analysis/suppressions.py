"""Which diagnostics the file's suppression comments silence, and which comments silence nothing
(SH401, ruff's RUF100): codes that match no diagnostic on their line, codes of rules that are not
enabled, codes no rule has, and repeated codes.

A suppression is only called unused when the analysis of its lines was complete: not in a
statement that does not parse, and not after the file's evaluation budget ran out. Otherwise a
diagnostic it silences may simply not have been computed, and removing the comment would be wrong.
Codes of other tools in a `# noqa` (`F401`) and bare `# noqa` comments are never reported: they
may serve another linter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Diagnostic, Span
from shardls.analysis.pragmas import NOQA, Pragmas, Suppression, ours
from shardls.analysis.rules import ALL_RULES
from shardls.analysis.settings import Settings
from shardls.analysis.source import ParsedSource
from shardls.core import Severity

UNUSED = "SH401"
INVALID = "SH402"


@dataclass(frozen=True)
class Suppressed:
    kept: tuple[Diagnostic, ...]
    silenced: tuple[Diagnostic, ...]


def apply_suppressions(
    pragmas: Pragmas,
    diagnostics: Sequence[Diagnostic],
    settings: Settings,
    source: ParsedSource,
    complete: bool,
    assumption: str | None = None,
) -> Suppressed:
    """Split the enabled `diagnostics` into those reported and those a comment silences, adding
    an SH401 for each suppression that silences nothing (when `complete`; `assumption` names
    what the analysis assumed, such as the default device count)."""
    used: dict[Suppression, set[str]] = {}
    kept: list[Diagnostic] = [] if pragmas.suppressions else list(diagnostics)
    silenced: list[Diagnostic] = []
    for diagnostic in diagnostics if pragmas.suppressions else ():
        by = pragmas.suppression_for(diagnostic.span.line, diagnostic.code)
        if by is None:
            kept.append(diagnostic)
        else:
            silenced.append(diagnostic)
            used.setdefault(by, set()).add(diagnostic.code)
    if complete and settings.enabled(UNUSED):
        broken = _broken_lines(source)
        for suppression in pragmas.suppressions:
            covered = {suppression.line} | pragmas.covered_lines.get(suppression.line, set())
            if covered & broken:
                continue
            finding = _unused(suppression, used.get(suppression, set()), settings, assumption)
            if finding is None:
                continue
            (silenced if _names_unused(pragmas, suppression.line) else kept).append(finding)
    return Suppressed(
        tuple(sorted(kept, key=diagnostic_order)), tuple(sorted(silenced, key=diagnostic_order))
    )


def diagnostic_order(diagnostic: Diagnostic) -> tuple[int, int, int, int, str]:
    """By span, then code: as a tuple of plain values, compared without `Span`'s methods."""
    span = diagnostic.span
    return span.line, span.column, span.end_line, span.end_column, diagnostic.code


def _names_unused(pragmas: Pragmas, line: int) -> bool:
    """Only a comment that names SH401 silences it: a blanket one would hide its own report."""
    return any(s.codes is not None and any(c.code == UNUSED for c in s.codes) for s in pragmas.on_line(line))


def _broken_lines(source: ParsedSource) -> set[int]:
    return {
        segment.first_line + n
        for segment in source.segments
        if segment.error is not None
        for n in range(len(segment.lines))
    }


def _unused(
    suppression: Suppression, used: set[str], settings: Settings, assumption: str | None
) -> Diagnostic | None:
    span = Span(suppression.line, suppression.column, suppression.line, suppression.end_column)
    suffix = f"; judged with {assumption}" if assumption else ""
    assumptions = (assumption,) if assumption else ()
    if suppression.codes is None:
        if suppression.kind == NOQA or used:
            return None
        message = f"unused blanket suppression: shardls reports nothing on this line{suffix}"
        data: dict[str, object] = {"kind": suppression.kind, "remove": ["*"], "keep": []}
        return Diagnostic(span, UNUSED, Severity.WARNING, message, data=data, assumptions=assumptions)
    groups: dict[str, list[str]] = {"unused": [], "non-enabled": [], "unknown": [], "duplicated": []}
    seen: set[str] = set()
    for entry in suppression.codes:
        code = entry.code
        if suppression.kind == NOQA and not ours(code) or code == UNUSED:
            continue
        if code in seen:
            groups["duplicated"].append(code)
        elif code not in ALL_RULES:
            groups["unknown"].append(code)
        elif not settings.enabled(code):
            groups["non-enabled"].append(code)
        elif code not in used:
            groups["unused"].append(code)
        seen.add(code)
    removed = [code for codes in groups.values() for code in codes]
    if not removed:
        return None
    reasons = "; ".join(f"{group}: {', '.join(codes)}" for group, codes in groups.items() if codes)
    dropped = {*groups["unused"], *groups["non-enabled"], *groups["unknown"]}
    keep = list(dict.fromkeys(entry.code for entry in suppression.codes if entry.code not in dropped))
    data = {"kind": suppression.kind, "remove": removed, "keep": keep}
    name = "`# noqa`" if suppression.kind == NOQA else "suppression"
    message = f"unused {name} ({reasons}){suffix}"
    return Diagnostic(span, UNUSED, Severity.WARNING, message, data=data, assumptions=assumptions)
