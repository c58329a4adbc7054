"""`shardls layout`: the numbers, the text and the JSON for valid layouts."""

from __future__ import annotations

import pytest
from cli_helpers import EXAMPLE_MESH, layout, layout_json


@pytest.mark.parametrize(
    ("mesh", "shard"),
    [("model=4", [8, 4]), ("model=1", [8, 16])],
)
def test_seed_examples(capsys: pytest.CaptureFixture[str], mesh: str, shard: list[int]) -> None:
    code, out = layout_json(capsys, "--mesh", mesh, "--shape", "8,16", "--spec", "None,model")
    assert code == 0
    assert out["shard_shape"] == shard
    assert out["problems"] == []


def test_column_sharding_text(capsys: pytest.CaptureFixture[str]) -> None:
    result = layout(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "P(None, 'model')")
    assert result.code == 0
    assert result.err == ""
    assert result.out == (
        "mesh        data=2, model=4 (8 devices, Auto axes)\n"
        "spec        P(None, 'model')\n"
        "used in     device_put\n"
        "global      float32[8,12@model]  384 bytes\n"
        "per device  float32[8,3]\n"
        "shards      4 distinct × 2 copies\n"
        "memory      96 bytes per device\n"
        "            768 bytes over all 8 devices\n"
        "\n"
        "Devices holding each shard (columns: dim 1 over model):\n"
        "┌──────────┬──────────┬──────────┬──────────┐\n"
        "│ 0:3      │ 3:6      │ 6:9      │ 9:12     │\n"
        "├──────────┼──────────┼──────────┼──────────┤\n"
        "│ dev 0, 4 │ dev 1, 5 │ dev 2, 6 │ dev 3, 7 │\n"
        "└──────────┴──────────┴──────────┴──────────┘\n"
        "\n"
        "no problems\n"
    )


def test_column_sharding_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = layout_json(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "P(None, 'model')")
    assert code == 0
    devices = out.pop("devices")
    assert out == {
        "global_shape": [8, 12],
        "dtype": "float32",
        "mesh": {"data": 2, "model": 4},
        "axis_types": {"data": "Auto", "model": "Auto"},
        "spec": [None, "model"],
        "unreduced": [],
        "reduced": [],
        "context": "device_put",
        "shard_shape": [8, 3],
        "num_distinct_shards": 4,
        "copies": 2,
        "bytes_per_device": 96,
        "total_bytes": 768,
        "jax_type": "float32[8,12@model]",
        "per_device_type": "float32[8,3]",
        "padded": False,
        "problems": [],
    }
    assert [d["device"] for d in devices] == list(range(8))
    assert devices[3] == {"device": 3, "coords": [0, 3], "index": [None, [9, 12]], "replica_id": 0}
    assert devices[7] == {"device": 7, "coords": [1, 3], "index": [None, [9, 12]], "replica_id": 1}


@pytest.mark.parametrize(
    ("spec", "shard", "distinct", "rows_of_dev"),
    [
        # P('data', 'model'): every device its own block.
        ("P('data', 'model')", [4, 3], 8, {0: [0, 4], 5: [4, 8]}),
        # P('model') splits rows four ways; devices 0 and 4 share rows 0:2.
        ("P('model')", [2, 12], 4, {0: [0, 2], 4: [0, 2], 3: [6, 8]}),
        # P(('data', 'model')) splits rows eight ways, data most significant.
        ("P(('data', 'model'))", [1, 12], 8, {1: [1, 2], 4: [4, 5]}),
        # P(('model', 'data')) the other way round: device 1 gets rows 2:3 (reference §2).
        ("P(('model', 'data'))", [1, 12], 8, {1: [2, 3], 4: [1, 2]}),
    ],
)
def test_distinct_shards_and_blocks(
    capsys: pytest.CaptureFixture[str],
    spec: str,
    shard: list[int],
    distinct: int,
    rows_of_dev: dict[int, list[int]],
) -> None:
    code, out = layout_json(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", spec)
    assert code == 0
    assert out["shard_shape"] == shard
    assert out["num_distinct_shards"] == distinct
    assert out["copies"] == 8 // distinct
    for device, rows in rows_of_dev.items():
        assert out["devices"][device]["index"][0] == rows


def test_empty_spec_replicates(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = layout_json(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "P()")
    assert code == 0
    assert out["shard_shape"] == [8, 12]
    assert (out["num_distinct_shards"], out["copies"]) == (1, 8)
    assert out["total_bytes"] == 8 * 384
    assert all(d["index"] == [None, None] for d in out["devices"])
    assert [d["replica_id"] for d in out["devices"]] == list(range(8))
    text = layout(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "P()").out
    assert "shards      1 distinct × 8 copies" in text
    assert "Every device holds the whole array: dev 0-7." in text


def test_dtype_and_human_units(capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "--mesh",
        "fsdp=8",
        "--shape",
        "50257,1024",
        "--spec",
        "P(None, 'fsdp')",
        "--dtype",
        "jnp.bfloat16",
    )
    code, out = layout_json(capsys, *args)
    assert (code, out["dtype"], out["shard_shape"]) == (0, "bfloat16", [50257, 128])
    assert out["bytes_per_device"] == 50257 * 128 * 2
    text = layout(capsys, *args).out
    assert "global      bfloat16[50257,1024@fsdp]  98.2 MiB (102,926,336 bytes)" in text
    assert "memory      12.3 MiB (12,865,792 bytes) per device" in text


def test_float64_is_narrowed_without_x64(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--mesh", "x=2", "--shape", "4", "--spec", "x", "--dtype", "float64")
    assert layout_json(capsys, *args)[1]["bytes_per_device"] == 8
    assert "float64 is float32 in JAX unless x64 is enabled" in layout(capsys, *args).out


def test_fill_size_resolved_from_devices(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = layout_json(
        capsys, "--mesh", "data=-1,model=4", "--devices", "8", "--shape", "8,12", "--spec", "data"
    )
    assert code == 0
    assert out["mesh"] == {"data": 2, "model": 4}
    assert out["shard_shape"] == [4, 12]


def test_scalar_with_empty_spec(capsys: pytest.CaptureFixture[str]) -> None:
    for shape in ("", "()", "[]"):
        code, out = layout_json(capsys, *EXAMPLE_MESH, "--shape", shape, "--spec", "P()")
        assert (code, out["global_shape"], out["shard_shape"], out["copies"]) == (0, [], [], 8)


@pytest.mark.parametrize("context", ["spec", "jit", "wsc_eager", "shard_map", "param"])
def test_contexts_accept_a_plain_layout(capsys: pytest.CaptureFixture[str], context: str) -> None:
    code, out = layout_json(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "data", "--context", context)
    assert (code, out["context"], out["shard_shape"]) == (0, context, [4, 12])


def test_axis_types_per_axis(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = layout_json(
        capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "data", "--axis-types", "Explicit,auto"
    )
    assert code == 0
    assert out["axis_types"] == {"data": "Explicit", "model": "Auto"}
    text = layout(capsys, *EXAMPLE_MESH, "--shape", "8,12", "--spec", "data", "--axis-types", "explicit").out
    assert "data=2, model=4 (8 devices, Explicit axes)" in text


def test_large_mesh_has_a_folded_grid_and_everything_else(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--mesh", "data=8,model=16", "--shape", "64,64", "--spec", "data,model")
    result = layout(capsys, *args)
    assert result.code == 0
    assert "shards      128 distinct × 1 copy" in result.out
    assert "memory      128 bytes per device" in result.out
    assert "8 × 16 shards, folded" in result.out
    assert "│ 56:64 │ dev 112 │" in result.out
    _, out = layout_json(capsys, *args)
    assert len(out["devices"]) == 128
    assert out["devices"][127] == {
        "device": 127,
        "coords": [7, 15],
        "index": [[56, 64], [60, 64]],
        "replica_id": 0,
    }


def test_json_lists_devices_up_to_4096(capsys: pytest.CaptureFixture[str]) -> None:
    def devices(mesh: str) -> object:
        return layout_json(capsys, "--mesh", mesh, "--shape", "8192", "--spec", "P()")[1].get("devices")

    assert isinstance(devices("x=4096"), list)
    assert devices("x=4097") is None
