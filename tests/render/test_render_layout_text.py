"""Summary lines, problem lines and the whole text report of a layout."""

from __future__ import annotations

from shardls.core import (
    AxisType,
    Mesh,
    PartitionSpec,
    Problem,
    Severity,
    UsageContext,
    compute_layout,
    parse_dtype,
)
from shardls.render.layout_text import layout_text, mesh_text, problem_line, spec_text, summary_lines

EXAMPLE = Mesh.of({"data": 2, "model": 4})


def test_summary_of_a_valid_layout() -> None:
    layout = compute_layout(EXAMPLE, PartitionSpec.of("data", "model"), (1024, 512), parse_dtype("bf16"))
    assert summary_lines(layout) == [
        "mesh        data=2, model=4 (8 devices, Auto axes)",
        "spec        P('data', 'model')",
        "used in     device_put",
        "global      bfloat16[1024@data,512@model]  1.0 MiB (1,048,576 bytes)",
        "per device  bfloat16[512,128]",
        "shards      8 distinct × 1 copy",
        "memory      128.0 KiB (131,072 bytes) per device",
        "            1.0 MiB (1,048,576 bytes) over all 8 devices",
    ]


def test_summary_of_a_rejected_layout() -> None:
    layout = compute_layout(EXAMPLE, PartitionSpec.of("data"), (3,), context=UsageContext.JIT)
    assert summary_lines(layout)[2:] == [
        "used in     jit (jit in_shardings/out_shardings)",
        "global      float32[3@data]  12 bytes",
        "per device  none: JAX rejects this layout (see the problems below)",
    ]


def test_mesh_text_names_mixed_axis_types() -> None:
    mesh = Mesh(("data", "model"), (2, 1), (AxisType.EXPLICIT, AxisType.AUTO))
    assert mesh_text(mesh) == "data=2, model=1 (2 devices; axis types data: Explicit, model: Auto)"
    assert mesh_text(Mesh.of({"x": 1})) == "x=1 (1 device, Auto axes)"


def test_spec_text_shows_the_canonical_form_when_it_differs() -> None:
    assert spec_text(PartitionSpec.of(None, "model", original='P(None, "model")')) == 'P(None, "model")'
    assert spec_text(PartitionSpec.of(("a",), original="(a,),")) == "(a,),  = P('a')"
    assert spec_text(PartitionSpec.of("a")) == "P('a')"


def test_problem_line() -> None:
    problem = Problem("SH104", Severity.ERROR, "too big")
    assert problem_line(problem) == "error SH104 mesh-larger-than-devices: too big"
    assert problem_line(Problem("SH999", Severity.INFO, "later rule")) == "info SH999: later rule"


def test_layout_text_sections() -> None:
    layout = compute_layout(EXAMPLE, PartitionSpec.of("model"), (8, 2))
    mesh_problem = Problem("SH104", Severity.ERROR, "the mesh needs 8 devices, but only 4 are available")
    sections = layout_text(layout, [mesh_problem]).split("\n\n")
    assert sections[0].splitlines()[4] == "per device  float32[2,2]"
    assert sections[1].startswith("Devices holding each shard (columns: dim 0 over model):\n┌")
    assert (
        sections[-1]
        == "error SH104 mesh-larger-than-devices: the mesh needs 8 devices, but only 4 are available\n"
    )


def test_a_large_mesh_gets_a_folded_grid() -> None:
    layout = compute_layout(Mesh.of({"data": 8, "model": 16}), PartitionSpec.of("data", "model"), (64, 64))
    text = layout_text(layout)
    assert "per device  float32[8,4]" in text
    assert "8 × 16 shards, folded" in text
    assert "│ 56:64 │ dev 112 │" in text
    assert text.endswith("┘\n\nno problems\n")
