"""Which devices hold each block of an array: the array cut into its distinct shards.

Modelled on `jax.debug.visualize_array_sharding`: the table is the array, not the mesh. Each
cell is one distinct shard, labelled with the devices that hold it, so replicas share a cell
and a 2×4 mesh sharding one dimension four ways is one row of four cells, not eight. Rows are
the blocks of every split dimension but the last, columns the blocks of the last one; unsplit
dimensions take no room. A grid too big to read is folded to its first and last rows and
columns around `...`, so it stays a screen high for any mesh.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

from shardls.core.layout import Layout
from shardls.render.table import box_table

MAX_GRID_DEVICES = 4096
"""Above this the grid is not drawn: finding each device's block costs ~10 ms per 1,000 devices,
too much for a hover, and a grid folded from so many says little the summary does not."""

MAX_ROWS = 8
"""Rows shown before the grid is folded (the first ones, `⋮`, and the last)."""

_MAX_ID_PARTS = 4
"""Runs of device ids in a cell before they are folded to `0, 4, ..., 60 (16 devices)`."""

_GAP = "..."
"""What stands for folded rows, columns and device ids: ASCII, so that a table keeps its columns
on a terminal that cannot show `…` (whose fallback is three characters wide)."""

Index = tuple[tuple[int, int] | None, ...]


def block_text(index: Sequence[tuple[int, int] | None]) -> str:
    """`[:, 3:6]`: `:` for a dimension that is not split, `start:stop` for one that is."""
    return "[" + ", ".join(":" if span is None else f"{span[0]}:{span[1]}" for span in index) + "]"


def device_grid(layout: Layout, width: int = 100) -> str:
    """The distinct shards as a table of device ids, under a line saying what rows and columns are.

    Holders are grouped by block, not by mesh coordinate, so that the grid has one cell per
    distinct shard, as `num_distinct_shards` counts them."""
    if layout.mesh.size > MAX_GRID_DEVICES:
        return f"(no device grid for a mesh of more than {MAX_GRID_DEVICES:,} devices)"
    holders: dict[Index, list[int]] = defaultdict(list)
    for block in layout.device_blocks():
        holders[block.index].append(block.device_id)
    split = [d for d, factor in enumerate(layout.dim_factors) if factor > 1]
    if not split:
        return f"Every device holds the whole array: {_devices(next(iter(holders.values())))}."
    *row_dims, column_dim = split
    columns = _spans(holders, column_dim)
    rows = list(itertools.product(*(_spans(holders, d) for d in row_dims)))
    by_cell = {(_row_key(index, row_dims), index[column_dim]): ids for index, ids in holders.items()}
    cells = [[_devices(by_cell.get((row, column), [])) for column in columns] for row in rows]
    header = [_span_text(column) for column in columns]
    labels = [", ".join(map(_span_text, row)) for row in rows] if row_dims else None
    shown_rows = _folded(len(rows), MAX_ROWS)
    shown_columns = _folded(len(columns), _columns_that_fit(header, cells, labels, width))
    table = box_table(
        _pick(header, shown_columns, _GAP),
        [
            _pick(cells[r], shown_columns, _GAP) if r is not None else [_GAP] * len(shown_columns)
            for r in shown_rows
        ],
        None if labels is None else [labels[r] if r is not None else _GAP for r in shown_rows],
        width,
    )
    folded = len(shown_rows) < len(rows) or len(shown_columns) < len(columns)
    size = f"{len(rows):,} × {len(columns):,}" if folded else None
    return "\n".join([_caption(layout, row_dims, column_dim, size), *table])


def _spans(holders: dict[Index, list[int]], dim: int) -> list[tuple[int, int] | None]:
    """The distinct blocks of one dimension, in order along it."""
    return sorted({index[dim] for index in holders}, key=lambda span: span or (0, 0))


def _row_key(index: Index, row_dims: Sequence[int]) -> tuple[tuple[int, int] | None, ...]:
    return tuple(index[d] for d in row_dims)


def _span_text(span: tuple[int, int] | None) -> str:
    return ":" if span is None else f"{span[0]}:{span[1]}"


def _caption(layout: Layout, row_dims: Sequence[int], column_dim: int, folded: str | None) -> str:
    """`Devices holding each shard (rows: dim 0 over data, columns: dim 1 over model):`; a folded
    grid says how many rows × columns it has in all."""

    def dims(ds: Sequence[int]) -> str:
        return ", ".join(f"dim {d} over {_axes_text(layout.dim_axes[d])}" for d in ds)

    where = f"columns: {dims([column_dim])}"
    if row_dims:
        where = f"rows: {dims(row_dims)}; {where}"
    if folded is not None:
        where += f"; {folded} shards, folded"
    return f"Devices holding each shard ({where}):"


def _axes_text(axes: Sequence[str]) -> str:
    return axes[0] if len(axes) == 1 else "(" + ", ".join(axes) + ")"


def _columns_that_fit(
    header: Sequence[str], cells: Sequence[Sequence[str]], labels: Sequence[str] | None, width: int
) -> int:
    """How many equal-width columns `box_table` can put side by side in `width` (at least 3)."""
    cell_width = max(len(text) for row in [header, *cells] for text in row)
    label_width = max(map(len, labels)) + 3 if labels else 0
    return max(3, (width - 1 - label_width) // (cell_width + 3))


def _folded(count: int, limit: int) -> list[int | None]:
    """Positions to show out of `count`: all of them, or the first `limit - 2`, None (`...`) and the last."""
    if count <= limit:
        return list(range(count))
    return [*range(limit - 2), None, count - 1]


def _pick(items: Sequence[str], positions: Sequence[int | None], gap: str) -> list[str]:
    return [items[p] if p is not None else gap for p in positions]


def _devices(ids: Sequence[int]) -> str:
    """`dev 0`, `dev 0-3, 8`, or for many replicas `dev 0, 4, ..., 60 (16 devices)`."""
    return "dev " + _id_ranges(sorted(ids))


def _id_ranges(ids: Sequence[int]) -> str:
    """`0-3, 8, 10-11`: runs of consecutive device ids collapsed. Past four runs, strided replicas
    (runs of one length at one stride, as a mesh's unused axes give) fold to the first two runs,
    `...`, the last, and how many devices in all: `0, 4, ..., 60 (16)`, `0-1, 8-9, ..., 56-57 (16)`."""
    runs: list[list[int]] = []
    for device in ids:
        if runs and device == runs[-1][-1] + 1:
            runs[-1].append(device)
        else:
            runs.append([device])
    parts = [str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
    if len(parts) <= _MAX_ID_PARTS:
        return ", ".join(parts)
    stride = runs[1][0] - runs[0][0]
    regular = all(
        len(run) == len(runs[0]) and run[0] - previous[0] == stride for previous, run in zip(runs, runs[1:])
    )
    last = f", {parts[-1]}" if regular else ""
    return f"{parts[0]}, {parts[1]}, {_GAP}{last} ({len(ids):,} devices)"
