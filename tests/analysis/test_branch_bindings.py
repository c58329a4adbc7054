"""A name bound in one branch of a statement is not seen by its other branches (`scope_builder.py`,
`ScopeBuilder.restart`): an `else` reads what the name held before the `if`, an `except` what it
held before the `try`, a `case` what it held before the `match`. The `else` of an `if` used to
read the body's binding, which decided an error JAX never raises."""

from __future__ import annotations

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.source import SegmentParser

HEAD = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))
rows = NamedSharding(mesh, P("data"))
"""


def test_the_else_of_an_if_reads_what_the_name_held_before_it() -> None:
    analysis = analyze(
        HEAD + "def f(x, flag):\n"
        "    if flag:\n"
        "        x = jnp.ones((3, 5))\n"
        "    else:\n"
        "        q = jax.device_put(x, rows)\n"
        "    return x\n"
        "out = f(jnp.ones((8, 4)), False)\n"
        "late = f(jnp.ones((16, 4)), True)\n"
    )
    assert {s.shape for s in analysis.sites if s.name == "q"} == {(8, 4)}
    assert not analysis.diagnostics  # JAX never places the (3, 5) array


@pytest.mark.parametrize(
    "statement",
    [
        "if flag:\n    x = jnp.ones((3, 5))\nelse:\n    q = jax.device_put(x, rows)\n",
        "match flag:\n    case True:\n        x = jnp.ones((3, 5))\n    case _:\n        q = jax.device_put(x, rows)\n",
        "try:\n    pass\nexcept ValueError:\n    x = jnp.ones((3, 5))\nexcept KeyError:\n    q = jax.device_put(x, rows)\n",
    ],
    ids=["if-else", "match-case", "two-handlers"],
)
def test_another_branch_never_meets_a_branch_binding(statement: str) -> None:
    analysis = analyze(HEAD + "flag = False\nx = jnp.ones((8, 4))\n" + statement)
    assert {s.shape for s in analysis.sites if s.name == "q"} == {(8, 4)}
    assert not analysis.diagnostics


def test_a_handler_or_a_loops_else_meets_the_body_and_what_was_before() -> None:
    """An `except` runs after any part of the `try` body; a loop's `else` after any number of
    iterations: the name holds the body's value or the one it had before."""
    analysis = analyze(
        HEAD + "x = jnp.ones((8, 4))\n"
        "try:\n    x = jnp.ones((16, 4))\nexcept ValueError:\n    q = jax.device_put(x, rows)\n"
        "y = jnp.ones((8, 4))\n"
        "for i in range(3):\n    y = jnp.ones((16, 2))\nelse:\n    r = jax.device_put(y, rows)\n"
    )
    assert {s.shape for s in analysis.sites if s.name == "q"} == {(8, 4), (16, 4)}
    assert {s.shape for s in analysis.sites if s.name == "r"} == {(8, 4), (16, 2)}


def test_after_the_statement_both_branches_reach() -> None:
    module = ModuleInfo(
        "/virtual/m.py", None, SegmentParser().parse("x = 1\nif c:\n    x = 2\nelse:\n    y = x\nz = x\n")
    )
    scope = module.scope
    (in_else,) = [b for b in scope.bindings["y"]]
    at_else = scope.lookup("x", in_else.order)
    assert [b.line for b in at_else] == [0]  # 0-based: `x = 1`
    (after,) = [b for b in scope.bindings["z"]]
    assert sorted(b.line for b in scope.lookup("x", after.order)) == [0, 2]


def test_a_linen_module_applied_in_an_else_branch_gets_its_input() -> None:
    """flax_on_pjit.ipynb's MLP: `if self.use_scan: x, _ = nn.scan(...)(x) else: for ...: x, _ =
    DotReluDot(self.depth)(x)`: the else branch applies the layer to the module's input."""
    analysis = analyze(
        HEAD + "from flax import linen as nn\n"
        "class Block(nn.Module):\n"
        "    depth: int\n"
        "    @nn.compact\n"
        "    def __call__(self, x):\n"
        "        y = nn.Dense(self.depth, use_bias=False)(x)\n"
        "        y = jax.lax.with_sharding_constraint(y, rows)\n"
        "        return y, None\n"
        "class Stack(nn.Module):\n"
        "    depth: int\n"
        "    use_scan: bool\n"
        "    @nn.compact\n"
        "    def __call__(self, x):\n"
        "        if self.use_scan:\n"
        "            x, _ = nn.scan(Block, length=2, variable_axes={'params': 0}, split_rngs={'params': True})(self.depth)(x)\n"
        "        else:\n"
        "            x, _ = Block(self.depth)(x)\n"
        "        return x\n"
        "variables = Stack(32, False).init(jax.random.key(0), jnp.ones((8, 16)))\n"
    )
    assert site_named(analysis, "y").shard_shape == (1, 32)
