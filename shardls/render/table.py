"""A box-drawn text table that wraps its columns to a width, for device grids of any mesh."""

from __future__ import annotations

from collections.abc import Sequence


def box_table(
    header: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    labels: Sequence[str] | None = None,
    width: int = 100,
) -> list[str]:
    """Lines of a table of at least one row; `labels` head each row, `header` names each column.

    All columns have one width, so that when they do not fit in `width` they split into several
    aligned tables stacked vertically, each repeating the row labels (a 1-axis mesh of 64
    devices stays readable).
    """
    cell_width = max(len(cell) for row in [*rows, header or []] for cell in row)
    label_width = max(map(len, labels)) if labels else 0
    room = width - 1 - (label_width + 3 if labels else 0)
    per_table = max(1, room // (cell_width + 3))
    lines: list[str] = []
    for first in range(0, len(rows[0]), per_table):
        chunk = slice(first, first + per_table)
        if lines:
            lines.append("")
        lines += _draw(
            None if header is None else header[chunk],
            [row[chunk] for row in rows],
            labels,
            [label_width] * bool(labels) + [cell_width] * len(rows[0][chunk]),
        )
    return lines


def _draw(
    header: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    labels: Sequence[str] | None,
    widths: Sequence[int],
) -> list[str]:
    """One table; `widths` includes the label column when there are labels."""

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * (w + 2) for w in widths) + right

    def line(cells: Sequence[str]) -> str:
        return "│" + "│".join(f" {c:<{w}} " for c, w in zip(cells, widths, strict=True)) + "│"

    lead = [""] if labels else []
    lines = [rule("┌", "┬", "┐")]
    if header is not None:
        lines += [line([*lead, *header]), rule("├", "┼", "┤")]
    for r, row in enumerate(rows):
        lines.append(line([*([labels[r]] if labels else []), *row]))
    lines.append(rule("└", "┴", "┘"))
    return lines
