"""Jupyter notebooks as one Python text, with the way back from its lines to cells.

The code cells are analysed together, in order, because a notebook's cells share one namespace:
the mesh of cell 2 shards the arrays of cell 5. IPython syntax (`%magic`, `!shell`, `%%cell`
magics) is not Python; those lines become comments of the same length, so that the parser
skips them and columns stay where they were. IPython also strips a cell's leading indentation
(a cell pasted from inside a function runs); such a cell is read below a line `if True:` of its
own, which keeps its columns too. Nothing is executed.
"""

from __future__ import annotations

import bisect
import io
import json
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass

from shardls.files import source_lines


class NotebookError(ValueError):
    """The file is not a notebook shardls can read (broken JSON, no `cells` list)."""


@dataclass(frozen=True)
class Notebook:
    text: str
    """The code cells joined by newlines, IPython lines commented out."""
    cell_numbers: tuple[int, ...]
    """Per code cell, its 1-based position among all cells (how editors number cells)."""
    first_lines: tuple[int, ...]
    """Per code cell, the 0-based line of `text` where it starts."""
    line_counts: tuple[int, ...]
    """Per code cell, how many lines of `text` are its own (a header line shardls adds is not)."""

    def locate(self, line: int) -> tuple[int, int]:
        """A 0-based line of `text` as (cell number, 0-based line within that cell)."""
        index = max(0, bisect.bisect_right(self.first_lines, line) - 1)
        return self.cell_numbers[index], line - self.first_lines[index]

    def line_of(self, cell: int, line: int) -> int | None:
        """The 0-based line of `text` for a 0-based line of cell `cell` (None: no such code cell)."""
        if cell not in self.cell_numbers:
            return None
        index = self.cell_numbers.index(cell)
        return self.first_lines[index] + line if line < self.line_counts[index] else None


def read_notebook(raw: str) -> Notebook:
    """Parse nbformat 4 JSON; raises NotebookError saying what is wrong."""
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise NotebookError(f"the notebook is not valid JSON: {error}") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("the notebook has no list of cells (nbformat 4 is supported)")
    return join_cells(
        (number, _source(cell.get("source", ""), number))
        for number, cell in enumerate(cells, start=1)
        if isinstance(cell, dict) and cell.get("cell_type") == "code"
    )


def join_cells(cells: Iterable[tuple[int, str]]) -> Notebook:
    """Code cells given as (cell number, source), in order, as one text to analyse.

    The language server calls this with the cells an editor has open, which arrive without
    the notebook's JSON.
    """
    chunks: list[str] = []
    numbers: list[int] = []
    firsts: list[int] = []
    counts: list[int] = []
    line = 0
    for number, source in cells:
        lines = _python_lines(source)
        if _leading_indent(lines):
            chunks.append(_INDENTED_CELL)
            line += 1
        numbers.append(number)
        firsts.append(line)
        counts.append(len(lines))
        chunks.append("\n".join(lines))
        line += len(lines)
    return Notebook("\n".join(chunks), tuple(numbers), tuple(firsts), tuple(counts))


_INDENTED_CELL = "if True:  # IPython runs this cell with its leading indentation stripped"
"""The block an indented cell is read in: the same statements as IPython's dedented cell, at the
same columns (an `if` opens no scope, and `True` is decided)."""


def _leading_indent(lines: list[str]) -> bool:
    """IPython's `leading_empty_lines` and `leading_indent` transforms: a cell whose first line
    with text is indented runs with that indentation removed from every line."""
    first = next((text for text in lines if text.strip()), "")
    # Python ignores a comment's indentation: the block is needed only when a statement has one.
    statement = next((text for text in lines if text.strip() and not text.lstrip().startswith("#")), "")
    return first[:1] in (" ", "\t") and statement[:1] in (" ", "\t")


def _source(source: object, number: int) -> str:
    """A cell's source: one string, or a list of strings each ending in its newline."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    raise NotebookError(f"cell {number} has a source that is neither text nor a list of lines")


_ASSIGNED_MAGIC = re.compile(r"^(\s*[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)([%!])")
"""`current_dir = %pwd`, `files = !ls`: IPython assigns the output of a magic or a command."""


def _python_lines(source: str) -> list[str]:
    """The cell's lines (at least one), IPython syntax turned into Python that does nothing."""
    lines = list(source_lines(source.removesuffix("\n").removesuffix("\r")))
    if lines[0].startswith("%%"):
        return [_commented(text) if text.strip() else text for text in lines]
    plain = [_python_line(text) for text in lines]
    if plain == lines:
        # No line reads as IPython syntax, so none changes, wherever statements start: the
        # tokenizing below was most of the CPU of reading a notebook (bonsai: 32 of 38 ms).
        return lines
    inside = _inside_statements(source)
    python: list[str] = []
    continued = False
    for number, (text, line) in enumerate(zip(lines, plain, strict=True)):
        # IPython joins a magic or shell line ending in `\` with the next one (`!git clone \`).
        if continued and text.strip():
            converted = _commented(text)
        elif number in inside:  # it continues a bracket or a string (`% (a, b)` of a format): Python
            converted = text
        else:
            converted = line
        python.append(converted)
        continued = (continued or converted != text) and text.rstrip().endswith("\\")
    return python


def _inside_statements(source: str) -> set[int]:
    """0-based lines that continue an open bracket or a multi-line string: never the start of a
    statement, so never IPython syntax, whatever they start with."""
    inside: set[int] = set()
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(0, depth - 1)
            elif token.type == tokenize.NL and depth:
                inside.add(token.start[0])
            elif token.type == tokenize.STRING:
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass  # the lines read so far are known; the rest are read as before
    return inside


def _python_line(text: str) -> str:
    assigned = _ASSIGNED_MAGIC.match(text)
    if assigned is not None:  # the value is the command's output: unknown, `...` stands for it
        return text[: assigned.start(3)] + "...#" + text[assigned.end(3) :]
    if text.lstrip()[:1] not in ("%", "!"):
        return text
    indent = len(text) - len(text.lstrip())
    # Inside a block (`if in_colab:` then `  %pip install ...`) a comment would leave the block
    # empty; `pass` keeps it a statement.
    return text[:indent] + "pass#" + text[indent + 1 :] if indent else _commented(text)


def _commented(text: str) -> str:
    """`%time f()` -> `#time f()`: the same columns, and Python skips it."""
    indent = len(text) - len(text.lstrip())
    return text[:indent] + "#" + text[indent + 1 :]
