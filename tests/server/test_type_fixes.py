"""Quick fixes for the sharding-in-types errors, through the real server, judged by real JAX.

Each program has one error JAX raises (SH301, SH305, SH307 or SH308). For every quick fix the
server offers on it, the fix is applied to the text and the server analyses the new text again:
it must report no SH3xx there. Then every fixed program is run under JAX (on fake CPU devices, by
tests/core/types_source_worker.py) and must run to the end, with the fixed line's result of the
type the fix's title promised.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsp_helpers import RecordingClient, apply_edits, initialize, open_file, published, replace_all
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import fake_devices_env, run_under_jax

pytestmark = pytest.mark.asyncio


HEADER = """\
# shardls: device-count=8
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
w = jax.device_put(jnp.ones((16, 32)), P("Y", None))
r = jax.device_put(jnp.ones((8, 16)), P(None, "Y"))
ids = jnp.array([0, 1, 2, 3])
"""

PROGRAMS = {
    "matmul operator": ("SH301", "v1 = x @ w\n"),
    "jnp.matmul": ("SH301", "v1 = jnp.matmul(x, w)\n"),
    "einsum": ("SH301", 'v1 = jnp.einsum("ij,jk->ik", x, w)\n'),
    "dot_general": ("SH301", "v1 = jax.lax.dot_general(x, w, (((1,), (0,)), ((), ())))\n"),
    "reshape method": ("SH305", "v1 = x.reshape(16, 8)\n"),
    "jnp.reshape over lines": ("SH305", "v1 = jnp.reshape(\n    x,\n    (16, 8),\n)\n"),
    "concatenate": ("SH307", "v1 = jnp.concatenate([x, r])\n"),
    "stack": ("SH307", "v1 = jnp.stack([x, r, x], axis=1)\n"),
    "gather": ("SH308", "v1 = x[ids]\n"),
    "eager slice": ("SH308", "v1 = x[0:4]\n"),
    "at get": ("SH308", "v1 = x.at[ids].get()\n"),
    "matmul then more": ("SH301", "v1 = (x @ w) * 2\nv2 = v1.sum(axis=0)\n"),
}

OTHER_SPELLINGS = {
    "PartitionSpec by its name": (
        HEADER.replace("PartitionSpec as P", "PartitionSpec").replace("P(", "PartitionSpec("),
        "SH301",
        "v1 = x @ w\n",
    ),
    "only jax imported": (
        HEADER.replace("import jax.numpy as jnp\n", "")
        .replace(
            "from jax.sharding import AxisType, PartitionSpec as P\n", "from jax.sharding import AxisType\n"
        )
        .replace("jnp.", "jax.numpy.")
        .replace("P(", "jax.P("),
        "SH301",
        "v1 = x @ w\n",
    ),
}


def _sources() -> dict[str, tuple[str, str, str]]:
    """name -> (text, code, the line the error is on)."""
    found = {name: (HEADER + body, code, body.split("\n")[0]) for name, (code, body) in PROGRAMS.items()}
    for name, (header, code, body) in OTHER_SPELLINGS.items():
        found[name] = (header + body, code, body.split("\n")[0])
    return found


SOURCES = _sources()


async def _actions(client: RecordingClient, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    answer = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range, types.CodeActionContext([diagnostic])
        )
    )
    assert answer is not None
    return [a for a in answer if isinstance(a, types.CodeAction) and not a.title.startswith("Ignore ")]


def _jax(programs: list[str]) -> list[list[list[str]]]:
    outcomes: list[list[list[str]]] = run_under_jax(programs, fake_devices_env(8))
    return outcomes


async def test_each_fix_type_checks_and_runs_under_jax(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    fixed: list[tuple[str, str, str]] = []  # (program, title, fixed text)
    for index, (name, (text, code, line_text)) in enumerate(SOURCES.items()):
        uri = open_file(client, tmp_path / f"p{index}.py", text)
        first = await published(client, uri, lambda p, c=code: any(d.code == c for d in p.diagnostics))
        line = text.splitlines().index(line_text)
        (diagnostic,) = [d for d in first.diagnostics if d.code == code]
        assert diagnostic.range.start.line == line, name
        actions = await _actions(client, uri, diagnostic)
        assert actions, f"{name}: no quick fix for {code}"
        for number, action in enumerate(actions):
            assert action.edit is not None and action.edit.changes is not None
            new_text = apply_edits(text, action.edit.changes[uri])
            version = 2 + 2 * number
            replace_all(client, uri, version, new_text)
            after = await published(client, uri, lambda p, v=version: p.version == v)
            left = [d for d in after.diagnostics if d.code.startswith("SH3")]
            assert not left, f"{name}, {action.title!r}: still {[(d.code, d.message) for d in left]}"
            # back to the error, so that the next fix is analysed from a published change
            replace_all(client, uri, version + 1, text)
            await published(
                client,
                uri,
                lambda p, v=version + 1, c=code: p.version == v and any(d.code == c for d in p.diagnostics),
            )
            fixed.append((name, action.title, new_text))
    outcomes = _jax([text for _, _, text in fixed])
    for (name, title, text), outcome in zip(fixed, outcomes, strict=True):
        statements = [line for line in text.splitlines() if line.startswith("v")]
        assert len(outcome) == len(statements), f"{name}, {title!r}: JAX stopped at {outcome[-1]}\n{text}"
        assert all(result == "ok" for result, _ in outcome), f"{name}, {title!r}: {outcome}"
        promised = title.rsplit(": ", 1)[1]
        if not name.startswith("matmul then"):
            assert outcome[0][1] == promised, f"{name}, {title!r}: JAX gives {outcome[0][1]}"


async def test_a_name_bound_again_is_not_written(client: RecordingClient, tmp_path: Path) -> None:
    """`P` is also a parameter somewhere: the fix writes `jax.P`, and with `jax` rebound too,
    nothing."""
    await initialize(client, tmp_path)
    text = HEADER + "def scale(P):\n    return P\nv1 = x @ w\n"
    uri = open_file(client, tmp_path / "rebound.py", text)
    first = await published(client, uri, lambda p: any(d.code == "SH301" for d in p.diagnostics))
    (diagnostic,) = [d for d in first.diagnostics if d.code == "SH301"]
    titles = [a.title for a in await _actions(client, uri, diagnostic)]
    assert titles and all("out_sharding=jax.P(" in t for t in titles), titles
    again = text.replace("def scale(P):", "def scale(P, jax=None):")
    uri = open_file(client, tmp_path / "rebound_twice.py", again)
    first = await published(client, uri, lambda p: any(d.code == "SH301" for d in p.diagnostics))
    (diagnostic,) = [d for d in first.diagnostics if d.code == "SH301"]
    assert await _actions(client, uri, diagnostic) == []


async def test_the_titles_say_what_each_choice_gives(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    text = HEADER + "v1 = jnp.concatenate([x, r])\n"
    uri = open_file(client, tmp_path / "titles.py", text)
    first = await published(client, uri, lambda p: any(d.code == "SH307" for d in p.diagnostics))
    (diagnostic,) = [d for d in first.diagnostics if d.code == "SH307"]
    titles = [a.title for a in await _actions(client, uri, diagnostic)]
    assert titles == [
        'Reshard r to P("X", "Y"): float32[16@X,16@Y]',
        'Reshard x to P(None, "Y"): float32[16,16@Y]',
    ]
