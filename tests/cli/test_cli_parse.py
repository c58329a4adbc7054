"""Command-line text for specs, shapes, meshes and axis types."""

from __future__ import annotations

import pytest
from cli_helpers import EXAMPLE_MESH, layout_json

from shardls.cli.parse import parse_shape
from shardls.cli.spec_parse import parse_spec
from shardls.core.mesh import AxisType
from shardls.core.spec import UNCONSTRAINED, PartitionSpec
from shardls.meshtext import parse_axis_types, parse_mesh_text

SPECS = [
    ("None,model", PartitionSpec.of(None, "model")),
    ("data,(fsdp,tp)", PartitionSpec.of("data", ("fsdp", "tp"))),
    ("(fsdp, tp),", PartitionSpec.of(("fsdp", "tp"))),
    ("model", PartitionSpec.of("model")),
    ("P(None, 'model')", PartitionSpec.of(None, "model")),
    ('P(None, "model")', PartitionSpec.of(None, "model")),
    ("PartitionSpec('a')", PartitionSpec.of("a")),
    ("jax.P('a')", PartitionSpec.of("a")),
    ("jax.sharding.PartitionSpec('a', None)", PartitionSpec.of("a", None)),
    ("(None, ('data', 'model'))", PartitionSpec.of(None, ("data", "model"))),
    ("[None, ['data', 'model']]", PartitionSpec.of(None, ("data", "model"))),
    ("P()", PartitionSpec.of()),
    ("()", PartitionSpec.of()),
    ("", PartitionSpec.of()),
    ("P(('a',), ())", PartitionSpec.of("a", None)),
    ("P(P.UNCONSTRAINED, 'x')", PartitionSpec.of(UNCONSTRAINED, "x")),
    ("P(jax.sharding.PartitionSpec.UNCONSTRAINED)", PartitionSpec.of(UNCONSTRAINED)),
    ("P('x', unreduced={'y'})", PartitionSpec.of("x", unreduced={"y"})),
    ("P('x', reduced=frozenset({'y'}), unreduced=set())", PartitionSpec.of("x", reduced={"y"})),
    ("P(('a', None))", PartitionSpec.of(("a", None))),
]


@pytest.mark.parametrize(("text", "expected"), SPECS)
def test_spec_syntax(text: str, expected: PartitionSpec) -> None:
    spec = parse_spec(text)
    assert (spec.entries, spec.unreduced, spec.reduced) == (
        expected.entries,
        expected.unreduced,
        expected.reduced,
    )
    assert spec.original == text


@pytest.mark.parametrize(
    ("text", "spec_json", "shard"),
    [
        ("None,model", [None, "model"], [8, 4]),
        ("data,(fsdp,tp)", ["data", ["fsdp", "tp"]], None),  # read, then reported: SH005
        ("P(None, 'model')", [None, "model"], [8, 4]),
        ("PartitionSpec('data')", ["data"], [4, 16]),
        ("jax.P('data')", ["data"], [4, 16]),
        ("(None, ('data', 'model'))", [None, ["data", "model"]], [8, 2]),
        ("P()", [], [8, 16]),
        ("P(P.UNCONSTRAINED, 'model')", ["UNCONSTRAINED", "model"], [8, 4]),
        ("P('model', unreduced={'data'})", ["model"], [2, 16]),
    ],
)
def test_spec_syntax_through_cli(
    capsys: pytest.CaptureFixture[str], text: str, spec_json: list[object], shard: list[int] | None
) -> None:
    # A bare spec accepts UNCONSTRAINED (the 'model' axis is Auto); the Explicit 'data' may be unreduced.
    args = ("--shape", "8,16", "--spec", text, "--context", "spec", "--axis-types", "explicit,auto")
    _, out = layout_json(capsys, *EXAMPLE_MESH, *args)
    assert (out["spec"], out["shard_shape"]) == (spec_json, shard)


@pytest.mark.parametrize(
    "text",
    [
        "P(",
        "P(1)",
        "P(...)",
        "P(*axes)",
        "P(('a', ('b', 'c')))",
        "f('a')",
        "P('a', b={'c'})",
        "P(foo.UNCONSTRAINED)",
    ],
)
def test_bad_spec_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_spec(text)


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("8,16", (8, 16)),
        ("(8, 16)", (8, 16)),
        ("[8, 16]", (8, 16)),
        ("8", (8,)),
        ("(8,)", (8,)),
        ("", ()),
        ("()", ()),
        ("[]", ()),
        (" 0 , 3 ", (0, 3)),
    ],
)
def test_shape(text: str, shape: tuple[int, ...]) -> None:
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["8,x", "8,,2", "8.0", "(8,-1)", ","])
def test_bad_shape(text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_shape(text)


def test_mesh_axes() -> None:
    mesh = parse_mesh_text(" data = 2 , model=-1,")
    assert (mesh.axis_names, mesh.axis_sizes) == (("data", "model"), (2, -1))
    with pytest.raises(ValueError, match="expected name=size"):
        parse_mesh_text("=2")


def test_axis_types() -> None:
    assert parse_axis_types("Explicit, auto,MANUAL") == (AxisType.EXPLICIT, AxisType.AUTO, AxisType.MANUAL)
    with pytest.raises(ValueError, match="expected an axis type"):
        parse_axis_types("")
