"""A statement that fixes a local's rank (`b, t, n, h = q.shape`, `assert p.ndim == 2`): below it
the name is an array of that rank, whatever it held before (tunix qwen2 `_, _, kh, _ =
key_proj.shape` after `key_proj = self.k_proj(x)`, jax-llm-examples `assert prompt.ndim == 2`).
Above it, and after the name is bound again, nothing changes."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import SymbolicDim

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, reshard
"""


def _names(shape: object) -> list[str] | None:
    return None if shape is None else [getattr(d, "name", d) for d in shape]  # type: ignore[attr-defined]


def test_unpacking_a_locals_shape_gives_it_that_rank_below_only() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))
def attention(x, proj):
    q = proj(x)
    before = reshard(q, NamedSharding(mesh, P("data")))
    b, t, n, h = q.shape
    after = reshard(q, NamedSharding(mesh, P("data")))
    k = proj(x)
    _, s, kh, _ = k.shape
    keys = reshard(k.transpose(0, 2, 1, 3), P("data"))
    return after
"""
    )
    assert site_named(analysis, "before").shape is None
    after = site_named(analysis, "after")
    assert after.shape == (SymbolicDim("b"), SymbolicDim("t"), SymbolicDim("n"), SymbolicDim("h"))
    assert _names(after.shard_shape) == ["b/2", "t", "n", "h"]
    assert not any("rank" in a for a in after.assumptions)
    assert _names(site_named(analysis, "keys").shape) == ["k.shape[0]", "kh", "s", "k.shape[3]"]
    assert not analysis.diagnostics


def test_an_assert_on_a_locals_rank_gives_it_as_an_assumption() -> None:
    """jax-llm-examples nemotron3 `prefill`: the prompt comes back from a helper, then
    `assert prompt.ndim == 2`. An assert is dropped under `python -O`: the rank is an assumption,
    so a spec longer than it is a warning, not an error."""
    source = (
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("x", "y"))
def prefill(tokens, prepare):
    prompt = prepare(tokens)
    assert prompt.ndim == 2
    prompt = reshard(prompt, P("x", None))
    wrong = reshard(prompt, NamedSharding(mesh, P("x", None, "y")))
    return prompt
"""
    )
    analysis = analyze(source)
    prompt = site_named(analysis, "prompt")
    assert _names(prompt.shape) == ["prompt.shape[0]", "prompt.shape[1]"]
    assert [(d.code, d.severity.value) for d in analysis.diagnostics] == [("SH002", "warning")]


def test_a_rebinding_or_a_starred_unpacking_gives_no_rank() -> None:
    analysis = analyze(
        HEADER
        + """
def f(x, proj):
    q = proj(x)
    b, t = q.shape
    q = proj(q)
    one = reshard(q, P())
    k = proj(x)
    b, *rest = k.shape
    two = reshard(k, P())
    return one
"""
    )
    assert site_named(analysis, "one").shape is None
    assert site_named(analysis, "two").shape is None


def test_a_known_shape_is_kept_and_a_branch_gives_the_rank_only_inside() -> None:
    analysis = analyze(
        HEADER
        + """
def f(proj, flag):
    q = jnp.zeros((4, 8))
    a, b = q.shape
    known = reshard(q, P())
    k = proj(q)
    if flag:
        c, d, e = k.shape
        inside = reshard(k, P())
    outside = reshard(k, P())
    return known
"""
    )
    assert site_named(analysis, "known").shape == (4, 8)
    assert _names(site_named(analysis, "inside").shape) == ["c", "d", "e"]
    # after the `if`, either: one site per possibility
    assert sorted(str(_names(s.shape)) for s in analysis.sites if s.name == "outside") == [
        "None",
        "['c', 'd', 'e']",
    ]


def test_a_parameters_rank_is_still_read_from_the_whole_body() -> None:
    """A parameter nobody passes keeps its rank from an unpacking anywhere in the body (as an
    assumption above it); the statement's own binding agrees with it below."""
    analysis = analyze(
        HEADER
        + """
def shard(x):
    first = reshard(x, P("data"))
    b, s, d = x.shape
    second = reshard(x, P("data"))
    return second
"""
    )
    assert _names(site_named(analysis, "first").shape) == ["b", "s", "d"]
    assert _names(site_named(analysis, "second").shape) == ["b", "s", "d"]


def test_a_call_of_a_value_with_two_options_is_made_for_each() -> None:
    """jax-llm-examples `prepare_chunk`: `if chunk.ndim == 1: chunk = chunk[None, :]` leaves two
    values; `jnp.pad` with a pair per dimension gives rank 2 for both, so the result has it."""
    analysis = analyze(
        HEADER
        + """
def prepare_chunk(chunk, pad_to, pad_id=0):
    if chunk.ndim == 1:
        chunk = chunk[None, :]
    chunk = jnp.pad(chunk, [(0, 0), (0, pad_to - chunk.shape[-1])], constant_values=pad_id)
    segment_ids = jnp.where(chunk != pad_id, 1, 0).astype(jnp.int32)
    return reshard(chunk, P("x", None)), reshard(segment_ids, P("x", None))
"""
    )
    shapes = [s.shape for s in analysis.sites]
    assert len(shapes) == 2 and all(shape is not None and len(shape) == 2 for shape in shapes)
    assert analysis.sites[1].dtype is not None and analysis.sites[1].dtype.name == "int32"


def test_an_assert_joining_ranks_with_and_fixes_each_of_them() -> None:
    """jax-llm-examples `apply_rotary_embedding`: `assert x.ndim == 4 and sin.ndim == 3 and
    cos.ndim == 3`, and a local given its rank the same way (`_moe_gmm`'s `lhs`, `rhs` after the
    router made them). Each rank is an assumption named on its sizes; a test that says nothing
    of a rank (`starts.size == bs`) is left aside."""
    analysis = analyze(
        HEADER
        + """
def rope(x, sin, cos, starts, bs, proj):
    assert x.ndim == 4 and sin.ndim == 3 and cos.ndim == 3
    rx = reshard(x, P("data"))
    rsin = reshard(sin, P())
    h = proj(x)
    assert starts.ndim == 1 and starts.size == bs and len(h.shape) == 2
    rstarts = reshard(starts, P())
    rh = reshard(h, P())
    return rx
"""
    )
    assert _names(site_named(analysis, "rx").shape) == [f"x.shape[{i}]" for i in range(4)]
    assert _names(site_named(analysis, "rsin").shape) == [f"sin.shape[{i}]" for i in range(3)]
    assert _names(site_named(analysis, "rstarts").shape) == ["starts.shape[0]"]
    assert _names(site_named(analysis, "rh").shape) == ["h.shape[0]", "h.shape[1]"]
    assert any("`h` has rank 2, as the assert at line" in a for a in site_named(analysis, "rh").assumptions)
    assert not analysis.diagnostics


def test_an_or_or_two_ranks_for_one_name_fix_nothing() -> None:
    """`assert x.ndim == 2 or x.ndim == 3` leaves the rank open; `assert y.ndim == 2 and
    y.ndim == 3` never holds, so it says nothing usable about `y` (its other operand still
    fixes `z`)."""
    analysis = analyze(
        HEADER
        + """
def f(x, y, z):
    assert x.ndim == 2 or x.ndim == 3
    rx = reshard(x, P())
    assert y.ndim == 2 and z.ndim == 1 and y.ndim == 3
    ry = reshard(y, P())
    rz = reshard(z, P())
    return rx
"""
    )
    assert site_named(analysis, "rx").shape is None
    assert site_named(analysis, "ry").shape is None
    assert _names(site_named(analysis, "rz").shape) == ["z.shape[0]"]


def test_a_shape_unpacked_inside_a_tuples_unpacking_fixes_the_rank() -> None:
    """jax-llm-examples MoE `_expert_fn`: `(b, s, d), e = x.shape, cfg.moe_experts_per_tok`, and
    `decode_ragged_dot`'s `(n, k), (g, _, m) = lhs.shape, rhs.shape`; a length that does not match
    (`(a, b), c = x.shape`, unpacking a shape into two targets) or a starred target gives nothing."""
    analysis = analyze(
        HEADER
        + """
def expert(x, lhs, rhs, y, z, n):
    (b, s, d), e = x.shape, n
    rx = reshard(x, P("data"))
    (n1, k), (g, _, m) = lhs.shape, rhs.shape
    rl = reshard(lhs, P())
    rr = reshard(rhs, P())
    (a, *rest), c = y.shape, n
    ry = reshard(y, P())
    u, v = z.shape, n, n
    rz = reshard(z, P())
    return rx
"""
    )
    assert _names(site_named(analysis, "rx").shape) == ["b", "s", "d"]
    assert _names(site_named(analysis, "rl").shape) == ["n1", "k"]
    assert _names(site_named(analysis, "rr").shape) == ["g", "rhs.shape[1]", "m"]
    assert site_named(analysis, "ry").shape is None
    assert site_named(analysis, "rz").shape is None
