"""Device grids: one cell per distinct shard with the devices holding it, for meshes of 0 to 4
axes and arrays of any rank, folded when large."""

from __future__ import annotations

import random

from shardls.core import Layout, Mesh, PartitionSpec, compute_layout
from shardls.render.grid import MAX_GRID_DEVICES, MAX_ROWS, block_text, device_grid
from shardls.render.table import box_table


def grid_of(axes: dict[str, int], spec: PartitionSpec, shape: tuple[int, ...], width: int = 100) -> str:
    layout: Layout = compute_layout(Mesh.of(axes), spec, shape)
    assert layout.is_valid
    return device_grid(layout, width)


def test_block_text() -> None:
    assert block_text([None, (0, 8), (9, 12)]) == "[:, 0:8, 9:12]"
    assert block_text([]) == "[]"


def test_one_split_dimension_is_one_row() -> None:
    assert grid_of({"x": 4}, PartitionSpec.of("x"), (8,)) == "\n".join(
        [
            "Devices holding each shard (columns: dim 0 over x):",
            "┌───────┬───────┬───────┬───────┐",
            "│ 0:2   │ 2:4   │ 4:6   │ 6:8   │",
            "├───────┼───────┼───────┼───────┤",
            "│ dev 0 │ dev 1 │ dev 2 │ dev 3 │",
            "└───────┴───────┴───────┴───────┘",
        ]
    )


def test_a_two_by_four_mesh_is_one_table_of_its_distinct_shards() -> None:
    """The issue's case: P(None, "model") on data=2 × model=4 was two tables of eight cells;
    JAX's visualize_array_sharding draws four blocks, each naming its two devices."""
    assert grid_of(
        {"data": 2, "model": 4}, PartitionSpec.of(None, "model"), (1024, 4096), width=80
    ) == "\n".join(
        [
            "Devices holding each shard (columns: dim 1 over model):",
            "┌───────────┬───────────┬───────────┬───────────┐",
            "│ 0:1024    │ 1024:2048 │ 2048:3072 │ 3072:4096 │",
            "├───────────┼───────────┼───────────┼───────────┤",
            "│ dev 0, 4  │ dev 1, 5  │ dev 2, 6  │ dev 3, 7  │",
            "└───────────┴───────────┴───────────┴───────────┘",
        ]
    )


def test_two_split_dimensions_are_rows_and_columns() -> None:
    assert grid_of({"data": 2, "model": 4}, PartitionSpec.of("data", "model"), (1024, 4096), width=80) == (
        "\n".join(
            [
                "Devices holding each shard (rows: dim 0 over data; columns: dim 1 over model):",
                "┌──────────┬───────────┬───────────┬───────────┬───────────┐",
                "│          │ 0:1024    │ 1024:2048 │ 2048:3072 │ 3072:4096 │",
                "├──────────┼───────────┼───────────┼───────────┼───────────┤",
                "│ 0:512    │ dev 0     │ dev 1     │ dev 2     │ dev 3     │",
                "│ 512:1024 │ dev 4     │ dev 5     │ dev 6     │ dev 7     │",
                "└──────────┴───────────┴───────────┴───────────┴───────────┘",
            ]
        )
    )


def test_three_split_dimensions_and_a_dimension_over_two_axes() -> None:
    spec = PartitionSpec.of("data", ("pipe", "model"), None, "expert")
    lines = grid_of({"pipe": 2, "data": 2, "model": 2, "expert": 2}, spec, (4, 8, 3, 2)).splitlines()
    assert lines[0] == (
        "Devices holding each shard (rows: dim 0 over data, dim 1 over (pipe, model); columns: dim 3 over expert):"
    )
    assert [line.split("│")[1].strip() for line in lines[4:12]] == [
        f"{d0}, {d1}" for d0 in ("0:2", "2:4") for d1 in ("0:2", "2:4", "4:6", "6:8")
    ]
    # pipe=1, data=0, model=0 is device 8; its block is [0:2, 4:6, :, 0:1] and [.., 1:2] for expert=1
    assert "│ 0:2, 4:6 │ dev 8  │ dev 9  │" in lines


def test_replicas_share_a_cell_and_collapse_to_ranges() -> None:
    grid = grid_of({"data": 2, "model": 4}, PartitionSpec.of("data"), (8, 4))
    assert grid.splitlines()[4] == "│ dev 0-3 │ dev 4-7 │"


def test_strided_replicas_fold_to_a_short_cell() -> None:
    grid = grid_of({"data": 16, "model": 4}, PartitionSpec.of("model"), (8,))
    assert "│ dev 0, 4, ..., 60 (16 devices) │" in grid
    runs = grid_of({"a": 2, "b": 2, "c": 2, "d": 2, "e": 2}, PartitionSpec.of("b", "d"), (2, 2))
    assert "│ 0:1 │ dev 0-1, 4-5, 16-17, 20-21     │" in runs  # four runs stay in full
    wide = grid_of({"a": 8, "b": 2, "c": 2}, PartitionSpec.of("b", None), (2, 2))
    assert "│ dev 0-1, 4-5, ..., 28-29 (16 devices) │" in wide
    irregular = grid_of({"a": 3, "b": 2, "c": 2, "d": 2}, PartitionSpec.of("b", "d"), (2, 2))
    assert "│ 0:1 │ dev 0, 2, ... (6 devices)" in irregular


def test_a_replicated_array_is_one_sentence() -> None:
    assert grid_of({"data": 2, "model": 4}, PartitionSpec.of(), (8, 4)) == (
        "Every device holds the whole array: dev 0-7."
    )
    assert grid_of({}, PartitionSpec.of(), (3,)) == "Every device holds the whole array: dev 0."
    assert grid_of({"x": 2}, PartitionSpec.of(), ()) == "Every device holds the whole array: dev 0-1."


def test_a_large_grid_folds_to_its_first_and_last_rows_and_columns() -> None:
    grid = grid_of({"fsdp": 32, "tp": 16}, PartitionSpec.of("fsdp", "tp"), (8192, 4096), width=80)
    lines = grid.splitlines()
    assert lines[0] == (
        "Devices holding each shard (rows: dim 0 over fsdp; columns: dim 1 over tp; 32 × 16 shards, folded):"
    )
    assert max(map(len, lines[1:])) <= 80
    assert len(lines) == 1 + 3 + MAX_ROWS + 1  # caption, top rule + header + rule, rows, bottom rule
    assert lines[2].split("│")[2:4] == [" 0:256     ", " 256:512   "]
    assert lines[2].split("│")[-3:-1] == [" ...       ", " 3840:4096 "]
    assert lines[4].split("│")[1:3] == [" 0:256     ", " dev 0     "]
    assert lines[-3].split("│")[1] == " ...       "
    assert lines[-2].split("│")[1:3] == [" 7936:8192 ", " dev 496   "]
    assert lines[-2].split("│")[-2] == " dev 511   "


def test_no_grid_above_the_device_bound() -> None:
    layout = compute_layout(Mesh.of({"data": 64, "model": 128}), PartitionSpec.of("data", "model"), (64, 128))
    assert layout.mesh.size > MAX_GRID_DEVICES
    assert device_grid(layout) == f"(no device grid for a mesh of more than {MAX_GRID_DEVICES:,} devices)"


def test_every_distinct_shard_is_one_cell_holding_exactly_its_devices() -> None:
    """For random meshes and specs, reading the grid back gives the core's blocks: each distinct
    block once, with the devices that hold it (the core's blocks are checked against JAX in
    tests/core)."""
    rng = random.Random(11)
    checked = 0
    for _ in range(200):
        names = ["a", "b", "c"][: rng.randint(1, 3)]
        axes = {name: rng.choice([1, 2, 3, 4]) for name in names}
        rank = rng.randint(1, 3)
        free = list(names)
        rng.shuffle(free)
        entries: list[str | None] = []
        for _ in range(rank):
            entries.append(free.pop() if free and rng.random() < 0.7 else None)
        shape = tuple(rng.choice([4, 12, 24]) for _ in range(rank))
        layout = compute_layout(Mesh.of(axes), PartitionSpec.of(*entries), shape)
        if not layout.is_valid:
            continue
        checked += 1
        expected: dict[tuple[tuple[int, int] | None, ...], set[int]] = {}
        for block in layout.device_blocks():
            expected.setdefault(block.index, set()).add(block.device_id)
        assert _read_back(layout, device_grid(layout, width=1000)) == expected
    assert checked > 100


def _read_back(layout: Layout, grid: str) -> dict[tuple[tuple[int, int] | None, ...], set[int]]:
    """The blocks a grid shows, as {index: device ids} (only for grids of at most MAX_ROWS rows)."""
    split = [d for d, f in enumerate(layout.dim_factors) if f > 1]
    if not split:
        assert grid.startswith("Every device holds the whole array: dev ")
        return {(None,) * len(layout.global_shape): set(range(layout.mesh.size))}
    lines = grid.splitlines()[1:]
    header = [cell.strip() for cell in lines[1].split("│")[1:-1]]
    labelled = len(split) > 1
    columns = header[1:] if labelled else header
    found: dict[tuple[tuple[int, int] | None, ...], set[int]] = {}
    for line in lines[3:-1]:
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        label, values = (cells[0], cells[1:]) if labelled else ("", cells)
        row_spans = [_span(text) for text in label.split(", ")] if labelled else []
        for column, value in zip(columns, values, strict=True):
            spans = dict(zip(split, [*row_spans, _span(column)], strict=True))
            index = tuple(spans.get(d) for d in range(len(layout.global_shape)))
            found[index] = _ids(value)
    return found


def _span(text: str) -> tuple[int, int]:
    start, stop = text.split(":")
    return int(start), int(stop)


def _ids(cell: str) -> set[int]:
    """The ids a cell names, with a folded cell expanded at its stride."""
    text, folded, count = cell.removeprefix("dev ").partition(" (")
    runs = [tuple(map(int, part.split("-"))) for part in text.split(", ") if part != "..."]
    ids = {device for run in runs for device in range(run[0], run[-1] + 1)}
    if folded:
        stride, length = runs[1][0] - runs[0][0], runs[0][-1] - runs[0][0] + 1
        ids = {start + i for start in range(runs[0][0], runs[-1][0] + 1, stride) for i in range(length)}
        assert len(ids) == int(count.removesuffix(" devices)"))
    return ids


def test_wide_rows_wrap_into_aligned_tables() -> None:
    lines = box_table(["c0", "c1", "c2"], [["aaaa", "b", "c"]], ["row"], width=21)
    assert lines == [
        "┌─────┬──────┬──────┐",
        "│     │ c0   │ c1   │",
        "├─────┼──────┼──────┤",
        "│ row │ aaaa │ b    │",
        "└─────┴──────┴──────┘",
        "",
        "┌─────┬──────┐",
        "│     │ c2   │",
        "├─────┼──────┤",
        "│ row │ c    │",
        "└─────┴──────┘",
    ]
    assert max(map(len, lines)) == 21
    assert len(box_table(["c0", "c1", "c2"], [["aaaa", "b", "c"]], ["row"], width=20)) == 3 * 5 + 2


def test_cells_name_the_devices_of_a_permuted_mesh() -> None:
    mesh = Mesh(("x",), (4,), device_ids=(7, 3, 5, 1))
    grid = device_grid(compute_layout(mesh, PartitionSpec.of("x"), (4,)))
    assert "│ dev 7 │ dev 3 │ dev 5 │ dev 1 │" in grid
