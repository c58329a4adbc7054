"""A long session's memory. What the analysis thread keeps is frozen out of the garbage
collector's passes once an analysis settles (`server/collection.py`); closing a document must
still free what its analyses kept, and a long session of opens, edits and closes must keep no more
than its open documents need. Objects are counted (frozen ones included), not timed."""

from __future__ import annotations

import asyncio
import gc
import random
import weakref
from pathlib import Path

import pytest

from shardls.analysis.settings import Settings
from shardls.server import analyses as analyses_module
from shardls.server.analyses import Analyses
from shardls.server.collection import Collection
from shardls.server.units import Part, Unit

pytestmark = pytest.mark.asyncio

SETTINGS = Settings()


def _model(index: int, blocks: int) -> str:
    lines = [
        "import jax",
        "import jax.numpy as jnp",
        "from flax import nnx",
        "from jax.sharding import NamedSharding, PartitionSpec as P",
        "",
        "mesh = jax.make_mesh((2, 4), ('data', 'model'))",
        "",
    ]
    for block in range(blocks):
        lines += [
            f"class Block{block}(nnx.Module):",
            f"    def __init__(self, d: int = {64 * (index + 1)}, rngs: nnx.Rngs | None = None):",
            "        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model'))",
            "        self.up = nnx.Linear(d, 4 * d, kernel_init=init, rngs=rngs)",
            "",
            f"x{block} = jax.device_put(jnp.zeros((128, {8 * (block + 1)})), NamedSharding(mesh, P('data', None)))",
            "",
        ]
    return "\n".join(lines)


def _edited(text: str, rng: random.Random) -> str:
    """One edit as typed: a number changed, a line added or removed, a statement pasted."""
    lines = text.split("\n")
    line = rng.randrange(len(lines))
    kind = rng.randrange(4)
    if kind == 0:
        lines[line] = lines[line].replace("128", str(rng.choice([96, 128, 130])), 1)
    elif kind == 1:
        lines.insert(line, "")
    elif kind == 2 and not lines[line].strip():
        del lines[line]
    else:
        lines.append(
            f"y{rng.randrange(1000)} = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('data')))"
        )
    return "\n".join(lines)


class _Session:
    """An editor's documents over `Analyses`, as the server's handlers drive it."""

    def __init__(self, analyses: Analyses, folder: Path) -> None:
        self.analyses = analyses
        self.folder = folder
        self.open: dict[Path, tuple[str, int]] = {}

    async def show(self, path: Path, text: str) -> None:
        version = self.open[path][1] + 1 if path in self.open else 0
        self.open[path] = (text, version)
        self.analyses.set_text(str(path), text)
        uri = path.as_uri()
        unit = Unit(uri, str(path), text, version, (Part(uri, 0, text.count("\n") + 1, version),))
        result = await self.analyses.result(unit, SETTINGS)
        self.analyses.index_soon(result.analysis)
        await self.settled()

    async def close(self, path: Path) -> None:
        del self.open[path]
        self.analyses.set_text(str(path), None)
        self.analyses.forget(path.as_uri())
        await self.settled()

    async def settled(self) -> None:
        """Until the analysis thread has done what was asked of it, a due full collection
        (IDLE_S is 0 here) included."""
        for _ in range(3):
            await asyncio.sleep(0)
            await asyncio.get_running_loop().run_in_executor(self.analyses._executor, lambda: None)

    def module(self, path: Path) -> object:
        """The module the workspace keeps for a document's text (asked in the analysis thread)."""
        return self.analyses._executor.submit(
            lambda: self.analyses._workspace.result().current(str(path))
        ).result()


def _garbage() -> tuple[int, int]:
    """The objects the collector tracks (frozen or not), and how many of them a full collection
    finds unreachable: the garbage freezing kept. Everything is frozen again afterwards."""
    kept = len(gc.get_objects()) + gc.get_freeze_count()
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    return kept, found


@pytest.fixture
def idle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyses_module, "IDLE_S", 0.0)


async def test_a_long_session_keeps_what_its_open_documents_need(tmp_path: Path, idle_at_once: None) -> None:
    rng = random.Random(14)
    paths = [tmp_path / f"model{index}.py" for index in range(4)]
    for index, path in enumerate(paths):
        path.write_text(_model(index, 6))
    analyses = Analyses([tmp_path], collection=Collection(slack=2_000))
    session = _Session(analyses, tmp_path)
    closed: list[weakref.ref[object]] = []
    checks: list[tuple[int, int, int]] = []
    for step in range(360):
        path = rng.choice(paths)
        if path not in session.open:
            await session.show(path, path.read_text())
        elif rng.random() < 0.15:
            closed.append(weakref.ref(session.module(path)))
            await session.close(path)
        else:
            await session.show(path, _edited(session.open[path][0], rng))
        if step % 30 == 29:
            checks.append((len(gc.get_objects()), *_garbage()))
    for path in list(session.open):
        closed.append(weakref.ref(session.module(path)))
        await session.close(path)
    analyses.close()

    assert len(closed) > 20
    assert all(ref() is None for ref in closed), "a closed document's module is still kept"
    for unfrozen, kept, garbage in checks:
        assert unfrozen < kept / 10, "what the analyses keep is not frozen"
        assert garbage <= kept * 0.25 + 2_000, "freezing kept garbage beyond the collector's own bound"
    assert checks[-1][1] < checks[0][1] * 1.2, "the session grows"


async def test_a_document_closed_and_opened_again_is_analysed_as_by_a_fresh_server(tmp_path: Path) -> None:
    """Closing drops what the analyzer and the workspace kept of a file (its results, modules and
    trees); a file importing it, and the file opened again, are analysed as a fresh server does."""
    helper = tmp_path / "sizes.py"
    helper.write_text("d_model = 96\nbatch = 8\n")
    model = tmp_path / "model.py"
    model.write_text("from sizes import batch, d_model\n" + _model(0, 3).replace("(128, ", "(batch * 16, "))
    analyses = Analyses([tmp_path])
    session = _Session(analyses, tmp_path)
    await session.show(helper, "d_model = 96\nbatch = 6\n")  # the editor's text: 96 rows
    await session.show(model, model.read_text())
    await session.close(helper)  # the disk's again: 128 rows
    edited = model.read_text().replace("\n\n", "\n\n\n", 1)
    await session.show(model, edited)
    await session.show(helper, helper.read_text())
    await session.close(model)
    await session.show(model, edited)

    fresh = Analyses([tmp_path])
    expected = _Session(fresh, tmp_path)
    await expected.show(model, edited)
    for results in (analyses._latest, fresh._latest):
        assert model.as_uri() in results
    ours, theirs = analyses._latest[model.as_uri()][1].analysis, fresh._latest[model.as_uri()][1].analysis
    assert ours.sites and ours.diagnostics == theirs.diagnostics
    assert [(s.span, s.layout) for s in ours.sites] == [(s.span, s.layout) for s in theirs.sites]
    analyses.close()
    fresh.close()


async def test_a_due_full_collection_waits_for_a_pause_in_requests(tmp_path: Path) -> None:
    """A full collection holds the interpreter for ~0.5 s with a large file open: a hover (which
    asks for its document's result) pushes a due one back, as an edit does, instead of waiting
    behind it. Read from the timer's deadline, not timed."""
    model = tmp_path / "model.py"
    text = _model(0, 2)
    model.write_text(text)
    analyses = Analyses([tmp_path])
    uri = model.as_uri()
    unit = Unit(uri, str(model), text, 0, (Part(uri, 0, text.count("\n") + 1, 0),))
    first = await analyses.result(unit, SETTINGS)
    await _Session(analyses, tmp_path).settled()
    analyses.forget((tmp_path / "other.py").as_uri())  # a document closed: a full collection is due
    timer = analyses._idle
    assert timer is not None
    await asyncio.sleep(0.01)
    assert await analyses.result(unit, SETTINGS) is first  # a hover's request, answered as kept
    assert timer.cancelled()
    assert analyses._idle is not None and analyses._idle.when() > timer.when()
    analyses.close()


async def test_what_an_analysis_made_is_frozen_before_the_collector_runs_again() -> None:
    """`Collection.analysing`: the collector is paused through the analysis, and what it made is
    frozen as it ends (no young collection traverses an Enter's moved results), with the
    collector's state as it was."""
    collection = Collection()
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        with collection.analysing():
            assert not gc.isenabled()
            made = [[index] for index in range(5_000)]
        assert gc.isenabled()
        young = {id(item) for item in gc.get_objects(0)}
        assert not any(id(item) in young for item in made)
        assert gc.get_count()[0] < 5_000
    finally:
        gc.unfreeze()
        if not was_enabled:
            gc.disable()
