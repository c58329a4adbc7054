"""What walks leave out because they could find nothing there.

A caller search walks only the statements that name the callee (`WalkPruning.unseen`): the others
can give no call of it, so their nested blocks are not walked, yet the search still stops where
one of them ends the block (a decided `if ...: raise`), as a full walk would. A discovery walk
does not search the callers of a function in which no call is worth visiting when the typing
pass is idle there (`WalkPruning.unvisited`, `TypingPass.idle`), nor the blocks of an `if`, a loop
or a `try` where nothing is worth visiting and the typing pass is inactive (`WalkPruning.quiet`)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator

import pytest
from analysis_helpers import analyze

from shardls.analysis import walker as walker_module
from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.walker import Walker

HEADER = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))

def place(rows):
    return jax.device_put(jnp.zeros((rows, 16)), NamedSharding(mesh, P('data')))
"""


def _rows(source: str) -> list[object]:
    sites = [s for s in analyze(source).sites if s.shape is not None]
    return [s.shape[0] if isinstance(s.shape[0], int) else None for s in sites]  # type: ignore[index]


def _caller(check: str) -> str:
    return HEADER + textwrap.dedent(
        f"""
        def run(ready):
            if {check}:
                raise ValueError("not ready")
            return place(6)
        """
    )


def test_a_raise_the_search_does_not_walk_still_ends_the_block() -> None:
    """The `if` names no `place`, but its test is decided: when it raises, `place(6)` never runs
    and `place` is seen with its rows unknown; when it does not, with 6."""
    assert _rows(_caller("not ready") + "run(True)\n") == [6]
    assert _rows(_caller("not ready") + "run(False)\n") == [None]


def test_blocks_without_the_callee_are_not_walked_by_its_search(monkeypatch: object) -> None:
    """The search for `place` walks neither the body of `if verbose:` nor the loop, which name
    no `place`, and still finds the call after them."""
    source = HEADER + textwrap.dedent(
        """
        def run(verbose, steps):
            if verbose:
                print("running")
            for step in range(steps):
                print(step)
            return place(6)

        run(True, 3)
        """
    )
    walked: list[str] = []
    statements = Walker._statements

    def recording(self: Walker, body: list[ast.stmt], *args: object) -> Iterator[object]:
        search = args[-1]
        if search.callee == "place":  # type: ignore[attr-defined]
            walked.extend(type(stmt).__name__ for stmt in body)
        return statements(self, body, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Walker, "_statements", recording)  # type: ignore[attr-defined]
    assert _rows(source) == [6]
    assert "Return" in walked
    assert "Expr" not in walked  # the `print` calls inside the `if` and the loop


SCALED = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

MESH

def scale(x, factor):  # keeps x's sharding (the site trigger matches this segment)
    return x * factor

def place(rows):
    return jax.device_put(jnp.zeros((rows, 16)), NamedSharding(mesh, P('data')))

y = scale(place(8), 2)
"""

AUTO_MESH = "mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))"


def _searched(source: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    searched: set[str] = set()
    call_contexts = walker_module.caller_contexts

    def recording(walker: Walker, info: FunctionInfo, depth: int) -> object:
        searched.add(info.name)
        return call_contexts(walker, info, depth)

    monkeypatch.setattr(walker_module, "caller_contexts", recording)
    assert _rows(source) == [8]
    return searched


@pytest.mark.parametrize(
    ("mesh", "searched"),
    [
        (AUTO_MESH, False),  # no Explicit axes anywhere: nothing in `scale` can be typed
        (AUTO_MESH + "\njax.set_mesh(mesh)", True),  # a mesh made current: it could be Explicit
    ],
)
def test_a_function_without_calls_is_searched_only_where_it_can_be_typed(
    mesh: str, searched: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scale` calls nothing a recognizer handles; its callers are searched only where the
    typing pass could type `x * factor`."""
    found = _searched(SCALED.replace("MESH", mesh), monkeypatch)
    assert "place" in found
    assert ("scale" in found) is searched


QUIET_BLOCKS = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

MESH

def run(verbose, steps, ready):
    if verbose:
        note = 'running'
    for step in range(steps):
        total = step * 2
    if not ready:
        raise ValueError(note)
    return jax.device_put(jnp.zeros((6, 16)), NamedSharding(mesh, P('data')))

run(True, 3, READY)
"""

EXPLICIT_MESH = "mesh = jax.make_mesh((2, 4), ('data', 'model'))"


def _discovered(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], set[str]]:
    """The rows of the sites, and the statements discovery walks reached."""
    walked: set[str] = set()
    statements = Walker._statements

    def recording(self: Walker, body: list[ast.stmt], *args: object) -> Iterator[object]:
        if args[-1].callee is None:  # type: ignore[attr-defined]
            walked.update(ast.unparse(stmt) for stmt in body)
        return statements(self, body, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Walker, "_statements", recording)
    return _rows(source), walked


@pytest.mark.parametrize(("mesh", "entered"), [(AUTO_MESH, False), (EXPLICIT_MESH, True)])
def test_blocks_without_calls_are_entered_only_where_they_can_be_typed(
    mesh: str, entered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blocks of `if verbose:` and of the loop call nothing worth visiting: a discovery walk
    enters them only where the typing pass could type their statements (a mesh with Explicit
    axes), and still finds the placement after them."""
    rows, walked = _discovered(QUIET_BLOCKS.replace("MESH", mesh).replace("READY", "True"), monkeypatch)
    assert rows == [6]
    assert ("note = 'running'" in walked) is entered
    assert ("total = step * 2" in walked) is entered


def test_an_unentered_block_that_raises_still_ends_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """`if not ready: raise ...` is not entered, but its test is decided by `ready=False`: the
    placement after it never runs, and is not visited."""
    rows, walked = _discovered(QUIET_BLOCKS.replace("MESH", AUTO_MESH).replace("READY", "False"), monkeypatch)
    assert rows == []
    assert "raise ValueError(note)" not in walked
