"""`wire.Serialised`: a diagnostic's JSON text is reused while what it rests on is the same; after
an edit of the unit last published, a kept diagnostic whose lines the edit left where they were
is reused without computing its placement again. Every publish must be what a fresh conversion
of each diagnostic gives."""

from __future__ import annotations

import json
import random

from lsprotocol import types

from shardls.analysis.facts import Diagnostic, Related, Span
from shardls.core import Severity
from shardls.server.documents import EditorWorkspace
from shardls.server.units import Unit, unit_for
from shardls.server.wire import Serialised

URI = "file:///w/model.py"


def _convert(unit: Unit) -> object:
    """A conversion that reads the lines a diagnostic's spans cover, as the real one does (its
    columns are counted in the text of those lines)."""

    def convert(diagnostic: Diagnostic) -> object:
        spans = [diagnostic.span, *(item.span for item in diagnostic.related)]
        return [[span.line, unit.lines[span.line], unit.lines[span.end_line]] for span in spans]

    return convert


def _diagnostic(rng: random.Random, lines: int) -> Diagnostic:
    line = rng.randrange(lines - 2)
    related = (Related(Span(line + 2, 0, line + 2, 1), "mesh"),) if rng.random() < 0.3 else ()
    return Diagnostic(
        Span(line, 0, line + rng.randrange(2), 1), "SH001", Severity.ERROR, "m", related=related
    )


def test_texts_reused_after_an_edit_are_those_a_fresh_conversion_gives() -> None:
    rng = random.Random(3)
    workspace = EditorWorkspace(None)
    text = "\n".join(f"x{n} = {n}" for n in range(60))
    workspace.put_text_document(types.TextDocumentItem(URI, "python", 1, text))
    serialised = Serialised()
    kept = [_diagnostic(rng, 60) for _ in range(80)]
    first = unit_for(workspace, URI)
    assert first is not None
    serialised.texts(first, kept, _convert(first))
    reused = 0
    for version in range(2, 400):
        line = rng.randrange(50)
        new = rng.choice(["y = 1", "y = 1\n", "", "z\nz\n"])
        end = line + rng.randrange(2)
        change = types.TextDocumentContentChangePartial(
            types.Range(types.Position(line, 0), types.Position(end, 0)), new
        )
        workspace.update_text_document(types.VersionedTextDocumentIdentifier(version, URI), change)
        unit = unit_for(workspace, URI)
        assert unit is not None and unit.edit is not None
        lines = len(unit.lines)
        if rng.random() < 0.3:  # some results analysed again: new objects
            kept[rng.randrange(len(kept))] = _diagnostic(rng, lines)
        shown = [d for d in kept if max(d.span.end_line, *(i.span.end_line for i in d.related), 0) < lines]
        if rng.random() < 0.2:
            serialised.texts(unit, shown[:5], _convert(unit))  # a publish of a part of them
            continue
        made = serialised.texts(unit, shown, _convert(unit))
        assert made == [json.dumps(_convert(unit)(d)) for d in shown]
        reused += sum(1 for d in shown if d in kept)
    assert reused


def test_the_lookups_for_hovers_are_built_in_the_analysis_thread_once_asked() -> None:
    """A publish asks for the per-line lookups after sending (`Analyses.index_soon`); they are
    built in the analysis thread, not beside the publish."""
    from shardls.analysis.analyzer import Analyzer
    from shardls.server.analyses import Analyses

    analysis = Analyzer().analyze("/w/model.py", "import jax\nx = 1\n")
    analyses = Analyses([])
    analyses.index_soon(analysis)
    analyses._executor.shutdown(wait=True)
    assert "_site_lines" in vars(analysis) and "_diagnostic_lines" in vars(analysis)
