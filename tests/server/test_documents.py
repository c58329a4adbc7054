"""The editor's documents follow LSP's line ends: random incremental edits of texts full of the
characters `str.splitlines` takes for line ends give the text an independent applier gives."""

from __future__ import annotations

import random
import re

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from shardls.server.documents import EditorDocument, EditorWorkspace, lsp_lines

SPLITLINES_ONLY = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Line ends to `str.splitlines`, ordinary characters to LSP."""
ALPHABET = ["a", "b", " ", "é", "𝓍", "\n", "\r\n", "\r", *SPLITLINES_ONLY]
LF_ALPHABET = [c for c in ALPHABET if "\r" not in c]
"""Without `\r`, an edit is applied to the lines it touches only (`EditorDocument`)."""


def _reference_lines(text: str) -> list[tuple[str, str]]:
    """Each line and its end (`""` for the last), as LSP counts them: a text ending in a line end
    has an empty last line."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    return list(zip(parts[::2], [*parts[1::2], ""], strict=True))


def _utf16_length(text: str) -> int:
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


def _reference_offset(text: str, position: types.Position) -> int:
    """The string index of an LSP position (UTF-16 columns), computed on its own terms."""
    offset = 0
    for number, (line, line_end) in enumerate(_reference_lines(text)):
        if number == position.line:
            units = 0
            for index, char in enumerate(line):
                if units >= position.character:
                    return offset + index
                units += _utf16_length(char)
            return offset + len(line)
        offset += len(line) + len(line_end)
    return len(text)


def _random_position(text: str, rng: random.Random) -> types.Position:
    lines = _reference_lines(text)
    line = rng.randrange(len(lines))
    columns = [0]
    for char in lines[line][0]:
        columns.append(columns[-1] + _utf16_length(char))
    return types.Position(line, rng.choice(columns))


def _random_edit(
    text: str, rng: random.Random, alphabet: list[str]
) -> types.TextDocumentContentChangePartial:
    first, second = _random_position(text, rng), _random_position(text, rng)
    start, end = sorted([first, second], key=lambda p: (p.line, p.character))
    inserted = "".join(rng.choice(alphabet) for _ in range(rng.randrange(4)))
    return types.TextDocumentContentChangePartial(types.Range(start, end), inserted)


def _apply(text: str, change: types.TextDocumentContentChangePartial) -> str:
    start = _reference_offset(text, change.range.start)
    end = _reference_offset(text, change.range.end)
    return text[:start] + change.text + text[end:]


@pytest.mark.parametrize("alphabet", [ALPHABET, LF_ALPHABET], ids=["all-line-ends", "lf-only"])
@pytest.mark.parametrize("seed", range(20))
def test_random_edits_land_where_an_lsp_client_puts_them(seed: int, alphabet: list[str]) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(alphabet) for _ in range(60))
    document = EditorDocument("file:///model.py", text)
    for _ in range(100):
        change = _random_edit(text, rng, alphabet)

        document.apply_change(change)
        text = _apply(text, change)

        assert document.source == text
        assert [line + end for line, end in _reference_lines(text) if line + end] == list(document.lines)


def test_the_reference_is_not_what_pygls_does() -> None:
    """The test above means something: pygls's own document, on such a text, edits another line."""
    text = "a\x0cb\nc\n"
    change = types.TextDocumentContentChangePartial(
        types.Range(types.Position(1, 0), types.Position(1, 1)), "X"
    )
    pygls_document = TextDocument("file:///model.py", text)

    pygls_document.apply_change(change)

    assert _apply(text, change) == "a\x0cb\nX\n" != pygls_document.source


@pytest.mark.parametrize(
    "text, lines",
    [
        ("", ()),
        ("a", ("a",)),
        ("a\n", ("a\n",)),
        ("a\r\nb\rc\nd", ("a\r\n", "b\r", "c\n", "d")),
        ("\r\r\n\n", ("\r", "\r\n", "\n")),
        ("a\x0cb\x85c\u2028d\n", ("a\x0cb\x85c\u2028d\n",)),
    ],
)
def test_lsp_lines(text: str, lines: tuple[str, ...]) -> None:
    assert lsp_lines(text) == lines


def test_the_workspace_keys_documents_by_their_exact_uri() -> None:
    workspace = EditorWorkspace(None)
    for uri, text in (("file:///a/b.py", "one"), ("file:///a/%62.py", "two")):
        workspace.put_text_document(types.TextDocumentItem(uri, "python", 1, text))

    workspace.remove_text_document("file:///a/b.py")

    assert workspace.get_text_document("file:///a/%62.py").source == "two"
    assert list(workspace.text_documents) == ["file:///a/%62.py"]
