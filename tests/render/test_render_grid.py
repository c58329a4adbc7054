"""Device grids for meshes of 0 to 4 axes and arrays of any rank."""

from __future__ import annotations

from shardls.core import Layout, Mesh, PartitionSpec, compute_layout
from shardls.render.grid import block_text, device_grid
from shardls.render.table import box_table


def grid_of(axes: dict[str, int], spec: PartitionSpec, shape: tuple[int, ...], width: int = 100) -> str:
    layout: Layout = compute_layout(Mesh.of(axes), spec, shape)
    assert layout.is_valid
    return device_grid(layout, width)


def test_block_text() -> None:
    assert block_text([None, (0, 8), (9, 12)]) == "[:, 0:8, 9:12]"
    assert block_text([]) == "[]"


def test_one_axis_mesh_is_one_row() -> None:
    assert grid_of({"x": 4}, PartitionSpec.of("x"), (8,)) == "\n".join(
        [
            "┌──────────────┬──────────────┬──────────────┬──────────────┐",
            "│ x=0          │ x=1          │ x=2          │ x=3          │",
            "├──────────────┼──────────────┼──────────────┼──────────────┤",
            "│ dev 0: [0:2] │ dev 1: [2:4] │ dev 2: [4:6] │ dev 3: [6:8] │",
            "└──────────────┴──────────────┴──────────────┴──────────────┘",
            "",
            "No two devices hold the same block.",
        ]
    )


def test_two_axis_mesh_rows_are_the_first_axis() -> None:
    assert grid_of({"data": 2, "model": 2}, PartitionSpec.of("model"), (4, 3)) == "\n".join(
        [
            "┌────────┬─────────────────┬─────────────────┐",
            "│        │ model=0         │ model=1         │",
            "├────────┼─────────────────┼─────────────────┤",
            "│ data=0 │ dev 0: [0:2, :] │ dev 1: [2:4, :] │",
            "│ data=1 │ dev 2: [0:2, :] │ dev 3: [2:4, :] │",
            "└────────┴─────────────────┴─────────────────┘",
            "",
            "Devices holding the same block:",
            "  [0:2, :]  dev 0, 2",
            "  [2:4, :]  dev 1, 3",
        ]
    )


def test_three_axis_mesh_and_rank_three_array() -> None:
    spec = PartitionSpec.of("data", None, ("pipe", "model"))
    lines = grid_of({"pipe": 2, "data": 2, "model": 2}, spec, (4, 6, 8)).splitlines()
    assert lines[1].split("│")[2:4] == [" model=0              ", " model=1              "]
    assert [line.split("│")[1].strip() for line in lines[3:7]] == [
        "pipe=0 data=0",
        "pipe=0 data=1",
        "pipe=1 data=0",
        "pipe=1 data=1",
    ]
    assert "│ pipe=1 data=0 │ dev 4: [0:2, :, 4:6] │ dev 5: [0:2, :, 6:8] │" in lines
    assert lines[-1] == "No two devices hold the same block."


def test_four_axis_mesh_rows_cover_all_leading_coordinates() -> None:
    grid = grid_of({"a": 2, "b": 1, "c": 2, "d": 2}, PartitionSpec.of(("a", "d")), (4,))
    rows = [line for line in grid.splitlines() if line.startswith("│ a=")]
    assert [row.split("│")[1].strip() for row in rows] == [
        "a=0 b=0 c=0",
        "a=0 b=0 c=1",
        "a=1 b=0 c=0",
        "a=1 b=0 c=1",
    ]
    assert "│ a=1 b=0 c=1 │ dev 6: [2:3] │ dev 7: [3:4] │" in rows
    assert "  [2:3]  dev 4, 6" in grid


def test_replicas_collapse_to_ranges() -> None:
    grid = grid_of({"data": 2, "model": 4}, PartitionSpec.of("data"), (8, 4))
    assert grid.endswith("Devices holding the same block:\n  [0:4, :]  dev 0-3\n  [4:8, :]  dev 4-7")


def test_zero_axis_mesh_and_scalar_are_one_cell() -> None:
    assert grid_of({}, PartitionSpec.of(), (3,)).splitlines()[:3] == [
        "┌────────────┐",
        "│ dev 0: [:] │",
        "└────────────┘",
    ]
    assert grid_of({"x": 2}, PartitionSpec.of(), ()).splitlines()[3] == "│ dev 0: [] │ dev 1: [] │"


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


def test_sixty_four_devices_wrap_to_the_width() -> None:
    grid = grid_of({"x": 64}, PartitionSpec.of("x"), (128,), width=81)
    assert max(map(len, grid.splitlines())) == 81  # "│" + 4 × " dev 63: [126:128] │"
    assert grid.count("┌") == 16
    assert "│ dev 63: [126:128] │" in grid


def test_cells_follow_mesh_coordinates_for_permuted_devices() -> None:
    mesh = Mesh(("x",), (4,), device_ids=(7, 3, 5, 1))
    grid = device_grid(compute_layout(mesh, PartitionSpec.of("x"), (4,)))
    assert "│ dev 7: [0:1] │ dev 3: [1:2] │ dev 5: [2:3] │ dev 1: [3:4] │" in grid
