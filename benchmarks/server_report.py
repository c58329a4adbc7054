"""How `bench_server.py` reports: the rounds of a server on a file summarized (medians, pooled
hovers), the table, the targets for shardls, and shardls' diagnostics scored against the tagged
mistakes."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from generate_models import expected
from server_files import one_line_edit
from server_session import Round

MIB = 1024 * 1024
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile, so p95 of 200 hovers is the 190th, an observed time."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


@dataclass
class Summary:
    """One server on one file over all rounds: medians of per-round times, pooled hovers."""

    initialize: float
    initialize_cpu: float
    open_to_first_diagnostics: float
    open_to_diagnostics: float
    open_cpu: float
    warm_open_to_diagnostics: float
    change_to_diagnostics: float
    changes_to_diagnostics: float | None
    """The median of the undo/redo edits' times (all rounds)."""
    change_cpu: float | None
    enters_to_diagnostics: float | None
    """The median of the Enters' times (all rounds), and of their whole-text undos'."""
    undos_to_diagnostics: float | None
    enter_cpu: float | None
    undo_cpu: float | None
    hover_p50: float | None
    hover_p95: float | None
    hover_max: float | None
    hover_count: int
    hover_after_edit_p95: float | None
    hover_after_edit_first: float | None
    hover_after_edit_count: int
    hover_answered: int
    first_hover: float | None
    hover_with_open: float | None
    peak_rss: int


def summarize(rounds: list[Round]) -> Summary:
    hovers = [t for r in rounds for t in r.hovers]
    after_edit = [t for r in rounds for t in r.hovers_after_edit]
    return Summary(
        initialize=statistics.median(r.initialize for r in rounds),
        initialize_cpu=statistics.median(r.initialize_cpu for r in rounds),
        open_to_first_diagnostics=statistics.median(r.open_to_first_diagnostics for r in rounds),
        open_to_diagnostics=statistics.median(r.open_to_diagnostics for r in rounds),
        open_cpu=statistics.median(r.open_cpu for r in rounds),
        warm_open_to_diagnostics=statistics.median(r.warm_open_to_diagnostics for r in rounds),
        change_to_diagnostics=statistics.median(r.change_to_diagnostics for r in rounds),
        changes_to_diagnostics=median([t for r in rounds for t in r.changes_to_diagnostics]),
        change_cpu=median([r.change_cpu for r in rounds]),
        enters_to_diagnostics=median([t for r in rounds for t in r.enters_to_diagnostics]),
        undos_to_diagnostics=median([t for r in rounds for t in r.undos_to_diagnostics]),
        enter_cpu=median([r.enter_cpu for r in rounds]),
        undo_cpu=median([r.undo_cpu for r in rounds]),
        hover_p50=quantile(hovers, 0.5) if hovers else None,
        hover_p95=quantile(hovers, 0.95) if hovers else None,
        hover_max=max(hovers) if hovers else None,
        hover_count=len(hovers),
        hover_after_edit_p95=quantile(after_edit, 0.95) if after_edit else None,
        hover_after_edit_first=median(
            [r.hovers_after_edit[0] if r.hovers_after_edit else None for r in rounds]
        ),
        hover_after_edit_count=len(after_edit),
        hover_answered=sum(r.hover_answered for r in rounds),
        first_hover=median([r.first_hover for r in rounds]),
        hover_with_open=median([r.hover_with_open for r in rounds]),
        peak_rss=max(r.peak_rss for r in rounds),
    )


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.1f} ms"


def print_table(summaries: dict[str, Summary]) -> None:
    rows: list[tuple[str, Callable[[Summary], str]]] = [
        ("spawn → initialize", lambda s: ms(s.initialize)),
        ("  server CPU until then", lambda s: ms(s.initialize_cpu)),
        ("didOpen → first diagnostics", lambda s: ms(s.open_to_first_diagnostics)),
        ("didOpen → all diagnostics", lambda s: ms(s.open_to_diagnostics)),
        ("  server CPU meanwhile", lambda s: ms(s.open_cpu)),
        ("warm didOpen → diagnostics", lambda s: ms(s.warm_open_to_diagnostics)),
        ("didChange → diagnostics", lambda s: ms(s.change_to_diagnostics)),
        ("  median of the undo/redo edits", lambda s: ms(s.changes_to_diagnostics)),
        ("  server CPU per edit", lambda s: ms(s.change_cpu)),
        ("  median of the Enters at line 11", lambda s: ms(s.enters_to_diagnostics)),
        ("  server CPU per Enter", lambda s: ms(s.enter_cpu)),
        ("  median of their whole-text undos", lambda s: ms(s.undos_to_diagnostics)),
        ("  server CPU per undo", lambda s: ms(s.undo_cpu)),
        ("hover p50", lambda s: ms(s.hover_p50)),
        ("hover p95", lambda s: ms(s.hover_p95)),
        ("hover max", lambda s: ms(s.hover_max)),
        ("hovers with content", lambda s: f"{s.hover_answered}/{s.hover_count}" if s.hover_count else "—"),
        ("hover p95, 1 s after an edit", lambda s: ms(s.hover_after_edit_p95)),
        ("  the first of them", lambda s: ms(s.hover_after_edit_first)),
        (
            "  hovers in that second",
            lambda s: str(s.hover_after_edit_count) if s.hover_after_edit_count else "—",
        ),
        ("first hover (after diags)", lambda s: ms(s.first_hover)),
        ("hover sent with didOpen", lambda s: ms(s.hover_with_open)),
        ("peak RSS", lambda s: f"{s.peak_rss / MIB:.1f} MiB"),
    ]
    names = list(summaries)
    width = max(len(label) for label, _ in rows)
    print(f"  {'':<{width}}  " + "  ".join(f"{name:>12}" for name in names))
    for label, cell in rows:
        print(f"  {label:<{width}}  " + "  ".join(f"{cell(summaries[name]):>12}" for name in names))


def check(label: str, value: float | None, limit: float, unit: str) -> bool | None:
    if value is None:
        print(f"  {label}: not measured")
        return None
    ok = value <= limit
    print(f"  {label}: {value:.2f}{unit} (target ≤ {limit:g}{unit}) {'ok' if ok else 'MISSED'}")
    return ok


def _to_ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def report_targets(summaries: dict[str, Summary], lines: int) -> None:
    shardls = summaries.get("shardls")
    if shardls is None:
        return
    floor, ruff = summaries.get("pygls-floor"), summaries.get("ruff")
    print("  targets for shardls:")
    if floor:
        check("initialize vs trivial pygls", shardls.initialize / floor.initialize, 1.2, "×")
        if floor.initialize_cpu:
            check("  the same in CPU time", shardls.initialize_cpu / floor.initialize_cpu, 1.2, "×")
    if ruff:
        ratios: list[tuple[str, Callable[[Summary], float], float]] = [
            ("cold didOpen→first diagnostics", lambda s: s.open_to_first_diagnostics, 5),
            ("cold didOpen→all diagnostics", lambda s: s.open_to_diagnostics, 5),
            ("warm didOpen→diagnostics", lambda s: s.warm_open_to_diagnostics, 2),
            ("didChange→diagnostics", lambda s: s.change_to_diagnostics, 1.5),
        ]
        for label, time_of, limit in ratios:
            check(f"{label} vs ruff", time_of(shardls) / time_of(ruff), limit, "×")
        for label, value_of in (
            ("  median of the undo/redo edits", lambda s: s.changes_to_diagnostics),
            ("  the same in CPU time", lambda s: s.change_cpu),
        ):
            mine, theirs = value_of(shardls), value_of(ruff)
            if mine is not None and theirs:
                check(f"{label} vs ruff", mine / theirs, 1.5, "×")
    check("hover p95", _to_ms(shardls.hover_p95), 5, " ms")
    check("hover p95 in the second after an edit", _to_ms(shardls.hover_after_edit_p95), 5, " ms")
    check("first hover after the diagnostics", _to_ms(shardls.first_hover), 50, " ms")
    check("hover sent right with didOpen", _to_ms(shardls.hover_with_open), 50, " ms")
    if lines >= 20_000:
        check("peak RSS with the file open", shardls.peak_rss / MIB, 120, " MiB")


def report_score(rounds: list[Round], text: str) -> bool:
    """shardls' published diagnostics against the tagged lines, after open and after the edit.

    The tagged mistakes are all errors, so errors are scored (all found, none extra; the exit
    status); diagnostics of other severities are counted by code, so that any that appear
    are seen, not hidden.
    """
    wanted = expected(text)
    line = one_line_edit(text).line
    ok = True
    for name, diagnostics, want in (
        ("after didOpen", rounds[0].published_after_open, wanted),
        ("after the warm didOpen", rounds[0].published_after_warm_open, wanted),
        ("after the edit", rounds[0].published_after_change, wanted | {(line, "SH001")}),
    ):
        got = {(number, code) for number, code, severity in diagnostics if severity == 1}
        missed, extra = want - got, got - want
        ok = ok and not missed and not extra
        others = Counter(
            f"{code} ({SEVERITIES.get(severity, severity)})"
            for _, code, severity in diagnostics
            if severity != 1
        )
        print(
            f"  shardls errors {name}: {len(want)} tagged, found {len(want & got)}, "
            f"missed {len(missed)}, extra {len(extra)}"
            + (f" e.g. {sorted(missed)[:5]}" if missed else "")
            + (f" e.g. {sorted(extra)[:5]}" if extra else "")
            + ("; also " + ", ".join(f"{n}× {c}" for c, n in sorted(others.items())) if others else "")
        )
    return ok
