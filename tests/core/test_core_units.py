"""Unit tests of shardls.core: the seed function, the worked 8x12 example, meshes, dtypes,
contexts and messages. Where JAX can judge a value without devices, it does."""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from core_cases import random_case
from core_support import jax_shard_shape, our_layout
from jax._src import core as jax_core
from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import AxisType as JaxAxisType
from jax.sharding import PartitionSpec as P

import shardls
from shardls.core import (
    CORE_RULES,
    FILL,
    FLOAT32,
    UNCONSTRAINED,
    AxisType,
    Layout,
    Mesh,
    MeshConstructor,
    PartitionSpec,
    Severity,
    UsageContext,
    compute_layout,
    dividing_axis_choices,
    normalize_entry,
    parse_dtype,
    partition_spec_layout,
    resolve_mesh,
)
from shardls.core.dtypes import known_dtype_names

DM = Mesh.of({"data": 2, "model": 4})


def spec(*entries: object) -> PartitionSpec:
    return PartitionSpec.of(*entries)  # type: ignore[arg-type]


def codes(layout: Layout) -> list[str]:
    return [p.code for p in layout.problems]


def rows(layout: Layout, dim: int = 0) -> list[object]:
    return [b.index[dim] for b in layout.device_blocks()]


# --- the seed function -------------------------------------------------------------------------


def test_partition_spec_layout_examples() -> None:
    assert shardls.partition_spec_layout is partition_spec_layout
    np.testing.assert_array_equal(partition_spec_layout(4, 8, 16), [8.0, 4.0])
    np.testing.assert_array_equal(partition_spec_layout(1, 8, 16), [8.0, 16.0])
    np.testing.assert_array_equal(partition_spec_layout(8, 1024, 4096), [1024.0, 512.0])


@pytest.mark.parametrize(
    "args",
    [(np.int64(4), 8, 16), (4, 8.0, 16), (np.int32(4), np.int64(8), np.float64(16.0)), (4.0, 8.0, 16.0)],
)
def test_partition_spec_layout_accepts_int_likes(args: tuple[object, object, object]) -> None:
    out = partition_spec_layout(*args)  # type: ignore[arg-type]
    assert isinstance(out, np.ndarray)
    assert out.shape == (2,)
    assert np.issubdtype(out.dtype, np.floating)
    np.testing.assert_array_equal(out, [8.0, 4.0])


def test_partition_spec_layout_matches_jax_and_floors_when_indivisible() -> None:
    for devices, rows_, cols in [(4, 8, 16), (2, 3, 6), (8, 16, 64), (16, 1, 16)]:
        ns = NamedSharding(
            AbstractMesh((devices,), ("model",), axis_types=(JaxAxisType.Auto,)), P(None, "model")
        )
        np.testing.assert_array_equal(
            partition_spec_layout(devices, rows_, cols), ns.shard_shape((rows_, cols))
        )
    # 6 columns on 4 devices: JAX rejects it; the function keeps its floor-division promise.
    np.testing.assert_array_equal(partition_spec_layout(4, 2, 6), [2.0, 1.0])
    with pytest.raises(ValueError, match="num_devices"):
        partition_spec_layout(0, 8, 16)
    with pytest.raises(ValueError, match="non-negative"):
        partition_spec_layout(2, -1, 16)


# --- the worked example: an 8x12 float32 array on a 2x4 (data, model) mesh ----------------------


def test_columns_over_model_give_four_distinct_8x3_shards_with_two_copies() -> None:
    layout = compute_layout(DM, spec(None, "model"), (8, 12))
    assert layout.shard_shape == (8, 3)
    assert (layout.num_distinct_shards, layout.copies) == (4, 2)
    assert layout.bytes_per_device == 8 * 3 * 4
    assert layout.total_bytes == 8 * 96
    assert layout.global_bytes == 8 * 12 * 4
    blocks = layout.device_blocks()
    assert [b.index for b in blocks] == [(None, (3 * (i % 4), 3 * (i % 4) + 3)) for i in range(8)]
    assert [b.replica_id for b in blocks] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [b.coords for b in blocks][:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    assert layout.problems == ()


def test_data_and_model_give_eight_distinct_shards() -> None:
    layout = compute_layout(DM, spec("data", "model"), (8, 12))
    assert layout.shard_shape == (4, 3)
    assert (layout.num_distinct_shards, layout.copies) == (8, 1)
    assert len({b.index for b in layout.device_blocks()}) == 8
    assert {b.replica_id for b in layout.device_blocks()} == {0}


def test_model_alone_splits_rows_not_columns() -> None:
    layout = compute_layout(DM, spec("model"), (8, 12))
    assert layout.shard_shape == (2, 12)
    assert (layout.num_distinct_shards, layout.copies) == (4, 2)
    assert rows(layout) == [(0, 2), (2, 4), (4, 6), (6, 8)] * 2
    assert rows(layout, 1) == [None] * 8


def test_empty_spec_replicates() -> None:
    layout = compute_layout(DM, spec(), (8, 12))
    assert layout.shard_shape == (8, 12)
    assert (layout.num_distinct_shards, layout.copies) == (1, 8)
    assert {b.index for b in layout.device_blocks()} == {(None, None)}
    assert [b.replica_id for b in layout.device_blocks()] == list(range(8))


def test_tuple_order_changes_blocks_not_shapes() -> None:
    """Reference §2: first-listed axis is the most significant digit; device order follows coordinates."""
    dm = compute_layout(DM, spec(("data", "model")), (8, 8))
    md = compute_layout(DM, spec(("model", "data")), (8, 8))
    assert dm.shard_shape == md.shard_shape == (1, 8)
    assert [r[0] for r in rows(dm)] == [0, 1, 2, 3, 4, 5, 6, 7]  # type: ignore[index]
    assert [r[0] for r in rows(md)] == [0, 2, 4, 6, 1, 3, 5, 7]  # type: ignore[index]
    permuted = Mesh(("data", "model"), (2, 4), (AxisType.AUTO,) * 2, device_ids=(7, 3, 5, 1, 6, 2, 4, 0))
    blocks = compute_layout(permuted, spec(("data", "model")), (8, 8)).device_blocks()
    assert [(b.device_id, b.index[0]) for b in blocks[:2]] == [(7, (0, 1)), (3, (1, 2))]


def test_zero_size_arrays_number_replicas_like_jax() -> None:
    # All blocks of (0, 32) on P('data') are the same empty slice: one shard, eight copies, ids 0..7.
    layout = compute_layout(DM, spec("data"), (0, 32))
    assert (layout.num_distinct_shards, layout.copies) == (1, 8)
    assert [b.replica_id for b in layout.device_blocks()] == list(range(8))
    both = compute_layout(DM, spec("data", "model"), (0, 32))
    assert (both.num_distinct_shards, both.copies) == (4, 2)
    assert [b.replica_id for b in both.device_blocks()] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_size_one_axes_never_divide() -> None:
    mesh = Mesh.of({"a": 1, "b": 8})
    assert compute_layout(mesh, spec("a"), (3, 16)).shard_shape == (3, 16)
    assert compute_layout(mesh, spec(("a", "b")), (16, 3)).shard_shape == (2, 3)
    tolerated = compute_layout(mesh, spec(None, None, "a"), (3, 16), context=UsageContext.SHARD_SHAPE)
    assert tolerated.shard_shape == (3, 16)
    assert [(p.code, p.severity) for p in tolerated.problems] == [("SH002", Severity.WARNING)]


# --- specs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (None, None),
        ("a", "a"),
        (("a",), "a"),
        (["a"], "a"),
        ((), None),
        ([], None),
        ((None,), None),
        (("a", "b"), ("a", "b")),
        (["a", "b"], ("a", "b")),
        (("a", None), ("a", None)),
        (UNCONSTRAINED, UNCONSTRAINED),
        ((UNCONSTRAINED,), UNCONSTRAINED),
    ],
)
def test_normalize_entry_matches_jax(raw: object, canonical: object) -> None:
    assert normalize_entry(raw) == canonical  # type: ignore[arg-type]
    jax_raw = P.UNCONSTRAINED if raw is UNCONSTRAINED else raw
    if isinstance(raw, tuple) and UNCONSTRAINED in raw:
        jax_raw = tuple(P.UNCONSTRAINED if a is UNCONSTRAINED else a for a in raw)
    jax_canonical = P.UNCONSTRAINED if canonical is UNCONSTRAINED else canonical
    assert P(jax_raw).partitions == (jax_canonical,)


def test_spec_text() -> None:
    s = PartitionSpec.of("data", ("fsdp", "tp"), None, UNCONSTRAINED, unreduced={"x"})
    assert s.canonical() == "P('data', ('fsdp', 'tp'), None, P.UNCONSTRAINED, unreduced={'x'})"
    assert s.display() == s.canonical()
    assert PartitionSpec.of("a", original="P('a')").display() == "P('a')"
    assert s.to_json() == ["data", ["fsdp", "tp"], None, "UNCONSTRAINED"]
    assert len(s) == 4
    assert s.padded(6)[4:] == (None, None)
    assert s.padded(1) == ("data",)


# --- meshes ---------------------------------------------------------------------------------------


def problem_codes(mesh: Mesh, devices: int | None) -> list[str]:
    return [p.code for p in resolve_mesh(mesh, devices)[1]]


def test_mesh_basics() -> None:
    assert DM.size == 8
    assert DM.describe() == "data=2, model=4"
    assert DM.has_auto_axis
    assert Mesh(("a",), (2,), constructor=MeshConstructor.MAKE_MESH).axis_types == (AxisType.EXPLICIT,)
    assert Mesh(("a",), (2,), constructor=MeshConstructor.MESH).axis_types == (AxisType.AUTO,)
    assert Mesh(("a",), (2,), constructor=MeshConstructor.ABSTRACT_MESH).axis_types == (AxisType.AUTO,)
    assert Mesh(("a",), (2,)).axis_types == (AxisType.AUTO,)
    assert DM.device_id(5) == 5
    assert Mesh(("a",), (2,), device_ids=(1, 0)).device_id(0) == 1


def test_duplicate_mesh_axis_names() -> None:
    assert problem_codes(Mesh(("a", "a"), (2, 4)), 8) == ["SH101"]
    layout = compute_layout(Mesh(("data", "data"), (2, 4)), spec("data"), (8,))
    assert layout.shard_shape is None
    assert codes(layout)[0] == "SH101"


def test_names_sizes_mismatch() -> None:
    (problem,) = resolve_mesh(Mesh(("ab",), (2, 4)), 8)[1]
    assert problem.code == "SH102"
    assert "a string is one name" in problem.message
    assert problem_codes(Mesh(("a", "b"), (8,)), 8) == ["SH102"]
    assert compute_layout(Mesh(("a", "b"), (8,)), spec("a"), (8,)).shard_shape is None


@pytest.mark.parametrize("size", [0, -2])
def test_invalid_axis_size(size: int) -> None:
    mesh = Mesh(("data", "model"), (size, 4))
    assert problem_codes(mesh, 8) == ["SH103"]
    layout = compute_layout(mesh, spec("data", "model"), (8, 8))  # must not divide by zero
    assert layout.shard_shape is None
    assert codes(layout)[0] == "SH103"


def test_make_mesh_needs_enough_devices_and_may_use_a_subset() -> None:
    make = MeshConstructor.MAKE_MESH
    assert problem_codes(Mesh(("a", "b"), (2, 8), constructor=make), 8) == ["SH104"]
    assert problem_codes(Mesh(("a", "b"), (2, 8), constructor=MeshConstructor.MESH), 8) == ["SH104"]
    (subset,) = resolve_mesh(Mesh(("x",), (4,), constructor=make), 8)[1]
    assert (subset.code, subset.severity) == ("SH107", Severity.INFO)
    assert subset.data == {"product": 4, "device_count": 8}
    assert problem_codes(Mesh(("x",), (4,), constructor=MeshConstructor.MESH), 8) == []  # a subset is fine
    assert problem_codes(Mesh(("x",), (8,), constructor=make), 8) == []
    assert problem_codes(Mesh(("a", "b"), (2, 8), constructor=make), None) == []
    assert problem_codes(Mesh(("a",), (4096,), constructor=MeshConstructor.ABSTRACT_MESH), 8) == []


@pytest.mark.parametrize("constructor", [MeshConstructor.CREATE_DEVICE_MESH, MeshConstructor.RESHAPE])
def test_exact_device_count_constructors(constructor: MeshConstructor) -> None:
    assert problem_codes(Mesh(("x",), (4,), constructor=constructor), 8) == ["SH105"]
    assert problem_codes(Mesh(("x", "y"), (3, 3), constructor=constructor), 8) == ["SH105"]
    assert problem_codes(Mesh(("x", "y"), (2, 4), constructor=constructor), 8) == []


def test_fill_axis() -> None:
    resolved, problems = resolve_mesh(
        Mesh(("data", "model"), (FILL, 4), constructor=MeshConstructor.RESHAPE), 16
    )
    assert resolved.axis_sizes == (4, 4)
    assert problems == []
    resolved, problems = resolve_mesh(Mesh(("data", "model"), (4, FILL)), 6)
    assert [p.code for p in problems] == ["SH106"]
    assert problems[0].data == {"device_count": 6, "product": 4}
    assert resolved.axis_sizes == (4, FILL)
    _, problems = resolve_mesh(Mesh(("a", "b", "c"), (FILL, 2, FILL)), 8)
    assert [p.code for p in problems] == ["SH109"]
    assert problems[0].data == {"fill_axes": ["a", "c"]}
    # unresolved: the layout says so instead of computing with -1
    unresolved = compute_layout(Mesh(("data", "model"), (FILL, 4)), spec("model"), (8,))
    assert unresolved.shard_shape is None
    assert codes(unresolved) == ["SH106"]


def test_axis_types_length_mismatch() -> None:
    mesh = Mesh(("a", "b"), (2, 4), (AxisType.AUTO,))
    assert problem_codes(mesh, 8) == ["SH108"]
    assert compute_layout(mesh, spec("a", "b"), (4, 4)).shard_shape is None


# --- dtypes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "bits"),
    [
        ("jnp.bfloat16", "bfloat16", 16),
        ("bf16", "bfloat16", 16),
        ("np.float32", "float32", 32),
        ("'float32'", "float32", 32),
        ('"int8"', "int8", 8),
        ("f16", "float16", 16),
        ("half", "float16", 16),
        ("jax.numpy.int4", "int4", 4),
        ("uint2", "uint2", 2),
        ("jnp.float8_e4m3fn", "float8_e4m3fn", 8),
        ("bool_", "bool", 8),
        ("u8", "uint8", 8),
    ],
)
def test_parse_dtype(text: str, name: str, bits: int) -> None:
    dtype = parse_dtype(text)
    assert (dtype.name, dtype.bits, dtype.requested) == (name, bits, None)


def test_x64_narrowing() -> None:
    for wide, narrow in [
        ("float64", "float32"),
        ("int64", "int32"),
        ("uint64", "uint32"),
        ("complex128", "complex64"),
    ]:
        dtype = parse_dtype(f"jnp.{wide}")
        assert (dtype.name, dtype.requested) == (narrow, wide)
        assert dtype.bits == jnp.dtype(jax.dtypes.canonicalize_dtype(wide)).itemsize * 8  # JAX without x64
        assert parse_dtype(wide, x64=True).name == wide
    assert parse_dtype("double").name == "float32"
    assert parse_dtype("double", x64=True).name == "float64"
    assert parse_dtype("f64").requested == "float64"
    with pytest.raises(ValueError, match="unknown dtype"):
        parse_dtype("float33")


@pytest.mark.parametrize("name", known_dtype_names())
def test_dtype_bits_match_jax(name: str) -> None:
    dtype = jnp.dtype(name)
    if jnp.issubdtype(dtype, jnp.integer):
        bits = jnp.iinfo(dtype).bits
    elif jnp.issubdtype(dtype, jnp.floating):
        bits = jnp.finfo(dtype).bits
    else:
        bits = dtype.itemsize * 8  # bool and complex
    assert parse_dtype(name, x64=True).bits == bits
    narrowed = jnp.dtype(jax.dtypes.canonicalize_dtype(dtype))  # x64 is off in this process
    assert parse_dtype(name).name == narrowed.name


def test_packed_sub_byte_sizes() -> None:
    """Reference §6: XLA packs int4/uint4/float4 to half a byte and int2/uint2 to a quarter."""
    assert parse_dtype("int4").bytes_for(4096) == 2048
    assert parse_dtype("uint4").bytes_for(4096) == 2048
    assert parse_dtype("float4_e2m1fn").bytes_for(4096) == 2048
    assert parse_dtype("int2").bytes_for(4096) == 1024
    assert parse_dtype("int4").bytes_for(3) == 2  # rounded up to whole bytes
    assert FLOAT32.bytes_for(10) == 40
    layout = compute_layout(DM, spec("model"), (4096,), dtype=parse_dtype("int4"))
    assert layout.bytes_per_device == 512
    assert layout.global_bytes == 2048


# --- contexts -------------------------------------------------------------------------------------

AUTO_EXPLICIT = Mesh(("data", "model"), (2, 4), (AxisType.EXPLICIT, AxisType.AUTO))
EXPLICIT = Mesh.of({"data": 2, "model": 4}, AxisType.EXPLICIT)


def test_padding_only_in_wsc_on_auto_axes() -> None:
    padded = compute_layout(DM, spec("model"), (6, 32), context=UsageContext.WSC)
    assert padded.padded and padded.shard_shape == (2, 32)
    (warning,) = padded.problems
    assert (warning.code, warning.severity) == ("SH007", Severity.WARNING)
    assert warning.data["padded_block"] == 2
    assert "pads every shard to 2 (2 padding elements in all)" in warning.message
    assert compute_layout(DM, spec("model"), (3, 32), context=UsageContext.WSC).shard_shape == (1, 32)
    assert compute_layout(DM, spec("model"), (13, 32), context=UsageContext.WSC).shard_shape == (4, 32)
    assert compute_layout(AUTO_EXPLICIT, spec("model"), (6, 32), context=UsageContext.WSC).shard_shape == (
        2,
        32,
    )
    for context in UsageContext:
        if context is UsageContext.WSC:
            continue
        mesh = EXPLICIT if context is UsageContext.RESHARD else DM
        layout = compute_layout(mesh, spec("model"), (6, 32), context=context)
        assert layout.shard_shape is None and not layout.padded
        assert codes(layout) == ["SH001"], context


def test_wsc_names_only_auto_axes() -> None:
    for context in (UsageContext.WSC, UsageContext.WSC_EAGER):
        layout = compute_layout(AUTO_EXPLICIT, spec("data"), (6, 32), context=context)
        assert codes(layout) == ["SH014"]
        assert layout.shard_shape is None
        assert "'data' is Explicit" in layout.problems[0].message
    # rank is checked first, then the axes, then divisibility: eagerly, 'model' (Auto) does not
    # divide 6, which stays a problem once 'data' leaves the spec
    assert codes(
        compute_layout(AUTO_EXPLICIT, spec("data", "model", None), (2, 6), context=UsageContext.WSC_EAGER)
    ) == ["SH002", "SH014", "SH001"]
    # a dimension only the rejected axis splits has no problem of its own: leaving the axis out
    # of the spec (the fix) leaves the dimension whole
    assert codes(compute_layout(AUTO_EXPLICIT, spec("data"), (3, 2), context=UsageContext.WSC_EAGER)) == [
        "SH014"
    ]


def test_wsc_naming_a_manual_axis_says_so_and_nothing_of_the_block_it_splits() -> None:
    """Inside a shard_map over 'data' (JAX 0.10.2: "can only refer to Auto axes of the mesh",
    axis_types=(Manual, Explicit)): the block's 1 row is not the reason, nor is reshard the fix."""
    body_mesh = Mesh(("data", "model"), (4, 2), (AxisType.MANUAL, AxisType.AUTO))
    layout = compute_layout(body_mesh, spec("data", "model"), (1, 2), context=UsageContext.WSC)
    (problem,) = layout.problems
    assert problem.code == "SH014" and problem.data == {"axis": "data", "axis_type": "Manual"}
    assert "'data' is Manual" in problem.message and "reshard" not in problem.message
    assert codes(compute_layout(body_mesh, spec(None, "model"), (1, 2), context=UsageContext.WSC)) == []


def test_wsc_on_all_explicit_mesh_only_asserts() -> None:
    for context in (UsageContext.WSC, UsageContext.WSC_EAGER):
        layout = compute_layout(EXPLICIT, spec("data"), (8, 32), context=context)
        assert [(p.code, p.severity) for p in layout.problems] == [("SH013", Severity.WARNING)]
        assert layout.shard_shape == (4, 32)
    uneven = compute_layout(EXPLICIT, spec("model"), (6, 32), context=UsageContext.WSC)
    assert codes(uneven) == ["SH013", "SH001"] and not uneven.padded  # Explicit axes are never padded
    assert "SH013" not in codes(compute_layout(DM, spec("data"), (8, 32), context=UsageContext.WSC))
    assert "SH013" not in codes(compute_layout(EXPLICIT, spec("data"), (8, 32), context=UsageContext.JIT))


def test_reshard_needs_explicit_axes() -> None:
    (problem,) = compute_layout(
        AUTO_EXPLICIT, spec("data", "model"), (8, 8), context=UsageContext.RESHARD
    ).problems
    assert problem.code == "SH011"
    assert problem.data == {"axis": "model"}
    assert (
        compute_layout(EXPLICIT, spec("data", "model"), (8, 8), context=UsageContext.RESHARD).problems == ()
    )


def test_flax_params_need_uniform_axis_types() -> None:
    (problem,) = compute_layout(AUTO_EXPLICIT, spec("data"), (8, 8), context=UsageContext.PARAM).problems
    assert problem.code == "SH012"
    assert "this mesh mixes data: Explicit, model: Auto" in problem.message
    assert compute_layout(EXPLICIT, spec("data"), (8, 8), context=UsageContext.PARAM).problems == ()


def test_unconstrained_outside_constraints() -> None:
    for context in (
        UsageContext.DEVICE_PUT,
        UsageContext.JIT,
        UsageContext.SHARD_MAP,
        UsageContext.RESHARD,
    ):
        layout = compute_layout(DM, spec(UNCONSTRAINED, "model"), (16, 32), context=context)
        assert codes(layout)[0] == "SH008", context
    assert "KeyError" in compute_layout(DM, spec(UNCONSTRAINED), (16,)).problems[0].message
    # Flax shards parameters on an all-Auto mesh with with_sharding_constraint, which accepts it.
    for context in (UsageContext.SHARD_SHAPE, UsageContext.WSC, UsageContext.WSC_EAGER, UsageContext.PARAM):
        layout = compute_layout(DM, spec(UNCONSTRAINED, "model"), (16, 32), context=context)
        assert layout.problems == () and layout.shard_shape == (16, 8)
    needs_auto = compute_layout(EXPLICIT, spec(UNCONSTRAINED), (16,), context=UsageContext.WSC)
    assert codes(needs_auto) == ["SH006", "SH013"]


def test_rank_errors() -> None:
    scalar = compute_layout(DM, spec(None), ())
    assert [(p.code, p.severity) for p in scalar.problems] == [("SH003", Severity.ERROR)]
    assert "write P()" in scalar.problems[0].message
    assert compute_layout(DM, spec(), ()).shard_shape == ()
    assert codes(compute_layout(DM, spec("data"), ())) == ["SH002"]
    too_long = compute_layout(DM, spec("data", None), (16,))
    assert codes(too_long) == ["SH002"]
    assert too_long.problems[0].data == {"spec_length": 2, "rank": 1}
    # shard_shape alone tolerates extra entries that shard nothing
    tolerated = compute_layout(DM, spec("data", None), (16,), context=UsageContext.SHARD_SHAPE)
    assert tolerated.shard_shape == (8,)
    assert tolerated.problems[0].severity is Severity.WARNING
    assert "shard_shape ignores it" in tolerated.problems[0].message
    indexerror = compute_layout(DM, spec("data", "model"), (16,), context=UsageContext.SHARD_SHAPE)
    assert indexerror.shard_shape is None and codes(indexerror) == ["SH002"]


def test_reshard_and_out_sharding_drop_extra_none_entries() -> None:
    """JAX 0.10: `reshard(jnp.zeros(8), P(None, None))` is `P(None,)` and `P('X', None)` is `P('X',)`
    (also `out_sharding=` of creations, products and `.at[].get`, on Explicit and Auto meshes, a
    scalar too); an extra axis raises, even of size 1; device_put rejects every extra entry."""
    kept = compute_layout(EXPLICIT, spec("data", None), (16,), context=UsageContext.RESHARD)
    assert kept.shard_shape == (8,) and not kept.problems
    for mesh in (DM, EXPLICIT):
        replicated = compute_layout(mesh, spec(None, None), (16,), context=UsageContext.RESHARD)
        assert replicated.shard_shape == (16,) and not replicated.problems
        assert not compute_layout(mesh, spec(None, None), (), context=UsageContext.RESHARD).problems
        assert codes(compute_layout(mesh, spec(None, None), (16,))) == ["SH002"]
    assert codes(compute_layout(EXPLICIT, spec(None, "data"), (16,), context=UsageContext.RESHARD)) == [
        "SH002"
    ]
    one = Mesh.of({"a": 1, "b": 8}, AxisType.EXPLICIT)
    assert codes(compute_layout(one, spec(None, "a"), (16,), context=UsageContext.RESHARD)) == ["SH002"]


def test_device_put_checks_explicit_divisibility_before_rank() -> None:
    # jax 0.10 types the value first (trimming trailing Nones), reference §7.4 / device test.
    assert codes(compute_layout(EXPLICIT, spec("model", None, None), (2, 4))) == ["SH001", "SH002"]
    assert codes(compute_layout(DM, spec("model", None, None), (2, 4))) == ["SH002", "SH001"]
    assert codes(compute_layout(EXPLICIT, spec("model", None, None), (2, 4), context=UsageContext.JIT)) == [
        "SH002",
        "SH001",
    ]


# --- messages and notation --------------------------------------------------------------------------


def test_unknown_axis_did_you_mean() -> None:
    (problem,) = compute_layout(DM, spec("dat"), (8,)).problems
    assert problem.code == "SH005"
    assert "did you mean 'data'?" in problem.message
    assert problem.data == {"axis": "dat", "suggestion": "data"}
    (problem,) = compute_layout(DM, spec(None, "modle"), (8, 8)).problems
    assert problem.data["suggestion"] == "model"
    (problem,) = compute_layout(DM, spec("foo"), (8,)).problems
    assert "did you mean" not in problem.message
    assert problem.data == {"axis": "foo", "suggestion": None}


def test_none_and_unconstrained_inside_tuples() -> None:
    (problem,) = compute_layout(DM, spec(("data", None)), (8,)).problems
    assert problem.code == "SH005" and "None inside a tuple" in problem.message
    # JAX counts the two Nones as a duplicate resource before looking for unknown names.
    assert codes(compute_layout(DM, spec(("data", None), ("model", None)), (8, 8)))[0] == "SH004"
    layout = compute_layout(DM, spec(("data", UNCONSTRAINED)), (8,))
    assert codes(layout) == ["SH005"] and "P.UNCONSTRAINED inside a tuple" in layout.problems[0].message


def test_duplicates() -> None:
    for entries in [("data", "data"), (("data", "data"),), (("data", "model"), "model")]:
        layout = compute_layout(DM, spec(*entries), (8, 8))
        assert codes(layout) == ["SH004"], entries
    assert codes(compute_layout(DM, spec("foo", "foo"), (8, 8))) == ["SH004", "SH005"]


def test_indivisible_problem_data() -> None:
    (problem,) = compute_layout(DM, spec("data"), (15, 32)).problems
    assert problem.code == "SH001"
    assert problem.data["nearest"] == [14, 16]
    assert problem.data["factor"] == 2
    assert "dimension 0 of [15, 32] has size 15" in problem.message
    (small,) = compute_layout(DM, spec("model"), (2, 32)).problems
    assert small.data["nearest"] == [4]
    assert dividing_axis_choices(DM, 6) == [("data",)]
    assert dividing_axis_choices(DM, 16) == [("data", "model"), ("model",), ("data",)]
    assert dividing_axis_choices(DM, 16, exclude={"model"}) == [("data",)]


def test_jax_type_notation() -> None:
    assert compute_layout(DM, spec("data"), (8, 16)).jax_type == "float32[8@data,16]"
    bf16 = parse_dtype("bfloat16")
    layout = compute_layout(DM, spec(("data", "model")), (4096, 512), dtype=bf16)
    assert layout.jax_type == "bfloat16[4096@(data,model),512]"
    assert layout.per_device_type == "bfloat16[512,512]"
    assert compute_layout(DM, spec(), ()).jax_type == "float32[]"
    assert compute_layout(DM, spec("data"), (15,)).per_device_type is None


def test_jax_type_equals_jax_on_explicit_meshes() -> None:
    """On Explicit axes the notation is exactly `str(jax.typeof(x))`."""
    rng = random.Random(7)
    compared = 0
    while compared < 300:
        case = random_case(rng)
        case["types"] = ["Explicit"] * len(case["types"])
        kind, _, ns = jax_shard_shape(case)
        if kind != "ok" or len(case["spec"]) > len(case["shape"]):
            continue
        dtype = rng.choice(["float32", "bfloat16", "int8", "int4"])
        case["dtype"] = dtype
        aval = jax_core.ShapedArray(tuple(case["shape"]), jnp.dtype(dtype), sharding=ns)
        assert our_layout(case, UsageContext.DEVICE_PUT).jax_type == str(aval), case
        compared += 1


def test_rule_catalogue() -> None:
    assert all(code == rule.code for code, rule in CORE_RULES.items())
    assert CORE_RULES["SH007"].severity is Severity.WARNING
    assert CORE_RULES["SH013"].severity is Severity.WARNING
    assert CORE_RULES["SH014"].severity is Severity.ERROR
    assert CORE_RULES["SH107"].severity is Severity.INFO
    # every problem the core reports has a catalogue entry with the same default severity
    rng = random.Random(3)
    seen = set()
    for _ in range(2000):
        case = random_case(rng)
        case["types"] = [rng.choice(["Auto", "Explicit"]) for _ in case["types"]]
        for context in UsageContext:
            for problem in our_layout(case, context).problems:
                seen.add(problem.code)
                rule = CORE_RULES[problem.code]
                tolerated = problem.code in ("SH002", "SH003")  # in shard_shape
                accepted = problem.code == "SH001" and context is UsageContext.ABSTRACT  # built anyway
                if not tolerated and not accepted:
                    assert problem.severity is rule.severity, problem
    assert {"SH001", "SH002", "SH003", "SH004", "SH005", "SH006", "SH007", "SH008"} <= seen
    assert {"SH011", "SH012", "SH013", "SH014"} <= seen
