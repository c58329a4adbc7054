"""Which block of the array each device holds, laid out by mesh coordinates.

Like `jax.debug.visualize_array_sharding`, but for arrays of any rank and without devices:
rows are the coordinates of all mesh axes but the last, columns the last axis.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

from shardls.core.layout import DeviceBlock, Layout
from shardls.render.table import box_table

MAX_GRID_DEVICES = 64
"""Above this a grid is too big to read; renderings show the summary only."""


def block_text(index: Sequence[tuple[int, int] | None]) -> str:
    """`[:, 3:6]`: `:` for a dimension that is not split, `start:stop` for one that is."""
    return "[" + ", ".join(":" if span is None else f"{span[0]}:{span[1]}" for span in index) + "]"


def device_grid(layout: Layout, width: int = 100) -> str:
    """The mesh as a table of `dev 3: [0:8, 9:12]` cells, then which devices share a block."""
    blocks = layout.device_blocks()
    mesh = layout.mesh
    *row_axes, column_axis = mesh.axis_names or ("",)
    columns = mesh.axis_sizes[-1] if mesh.axis_names else 1
    cells = [f"dev {block.device_id}: {block_text(block.index)}" for block in blocks]
    rows = [cells[start : start + columns] for start in range(0, len(cells), columns)]
    header = [f"{column_axis}={c}" for c in range(columns)] if mesh.axis_names else None
    labels = [
        " ".join(f"{name}={c}" for name, c in zip(row_axes, coords, strict=True))
        for coords in itertools.product(*(range(size) for size in mesh.axis_sizes[:-1]))
    ]
    table = box_table(header, rows, labels if row_axes else None, width)
    return "\n".join([*table, "", *_shared_blocks(blocks)])


def _shared_blocks(blocks: Sequence[DeviceBlock]) -> list[str]:
    """One line per block with the devices holding it, or one sentence when no block is shared."""
    holders: dict[tuple[tuple[int, int] | None, ...], list[int]] = defaultdict(list)
    for block in blocks:
        holders[block.index].append(block.device_id)
    if all(len(devices) == 1 for devices in holders.values()):
        return ["No two devices hold the same block."]
    width = max(len(block_text(index)) for index in holders)
    return ["Devices holding the same block:"] + [
        f"  {block_text(index):<{width}}  dev {_id_ranges(devices)}" for index, devices in holders.items()
    ]


def _id_ranges(ids: Sequence[int]) -> str:
    """`0-3, 8, 10-11`: runs of consecutive device ids collapsed, so 64 replicas stay one short line."""
    runs: list[list[int]] = []
    for device in ids:
        if runs and device == runs[-1][-1] + 1:
            runs[-1].append(device)
        else:
            runs.append([device])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)
