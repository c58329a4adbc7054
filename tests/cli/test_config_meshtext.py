"""The one mesh syntax shared by --mesh, `default-mesh` and the `# shardls: mesh` pragma."""

from __future__ import annotations

import pytest
from cli_helpers import layout_json

from shardls.analysis.pragmas import read_pragmas
from shardls.analysis.source import SegmentParser
from shardls.core import AxisType, Mesh
from shardls.meshtext import mesh_from_table, parse_axis_types, parse_mesh_text, with_axis_types

AUTO, EXPLICIT, MANUAL = AxisType.AUTO, AxisType.EXPLICIT, AxisType.MANUAL


@pytest.mark.parametrize(
    ("text", "mesh"),
    [
        ("data=2,model=4", Mesh(("data", "model"), (2, 4), (AUTO, AUTO))),
        ("data=2 model=4", Mesh(("data", "model"), (2, 4), (AUTO, AUTO))),
        (" data = 2 , model = -1 ,", Mesh(("data", "model"), (2, -1), (AUTO, AUTO))),
        ("data=2:explicit,model=4:Manual", Mesh(("data", "model"), (2, 4), (EXPLICIT, MANUAL))),
        ("data = 2 : explicit model=4", Mesh(("data", "model"), (2, 4), (EXPLICIT, AUTO))),
        ("x=0", Mesh(("x",), (0,), (AUTO,))),  # sizes are the core's to judge (SH103)
    ],
)
def test_mesh_text(text: str, mesh: Mesh) -> None:
    assert parse_mesh_text(text) == mesh


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the mesh needs at least one axis"),
        ("data", "expected name=size, such as data=2, but got 'data'"),
        ("=2", "expected name=size"),
        ("data=two", "the size of mesh axis 'data' must be an integer, got 'two'"),
        ("data=2:fast", "unknown axis type 'fast'; expected auto, explicit, manual"),
        ("data=2,,model=4", "empty item"),
    ],
)
def test_bad_mesh_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_mesh_text(text)


def test_table() -> None:
    assert mesh_from_table({"data": 2, "model": "4:explicit"}) == Mesh(
        ("data", "model"), (2, 4), (AUTO, EXPLICIT)
    )
    with pytest.raises(ValueError, match="must be an integer or 'size:type'"):
        mesh_from_table({"data": 2.5})


def test_axis_types() -> None:
    assert parse_axis_types("Explicit, auto,MANUAL") == (EXPLICIT, AUTO, MANUAL)
    mesh = parse_mesh_text("a=2,b=2")
    assert with_axis_types(mesh, (EXPLICIT,)).axis_types == (EXPLICIT, EXPLICIT)
    assert with_axis_types(mesh, (EXPLICIT, AUTO)).axis_types == (EXPLICIT, AUTO)
    with pytest.raises(ValueError, match="3 types for the 2 mesh axes a, b"):
        with_axis_types(mesh, (AUTO,) * 3)


@pytest.mark.parametrize("text", ["data=2:explicit,model=4", "data=2:explicit model=4"])
def test_the_pragma_reads_the_same_syntax(text: str) -> None:
    pragmas = read_pragmas(SegmentParser().parse(f"# shardls: mesh {text}"))
    assert pragmas.mesh == (parse_mesh_text(text), 0)
    bad = read_pragmas(SegmentParser().parse("# shardls: mesh data=two"))
    assert bad.errors == ((0, "the size of mesh axis 'data' must be an integer, got 'two'"),)


def test_the_layout_command_reads_the_same_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = layout_json(capsys, "--mesh", "data=2:explicit,model=4", "--shape", "8", "--spec", "data")
    assert (code, out["axis_types"]) == (0, {"data": "Explicit", "model": "Auto"})
    code, out = layout_json(
        capsys,
        "--mesh",
        "data=2:explicit,model=4",
        "--axis-types",
        "manual",
        "--shape",
        "8",
        "--spec",
        "data",
    )
    assert out["axis_types"] == {"data": "Manual", "model": "Manual"}  # the flag overrides
