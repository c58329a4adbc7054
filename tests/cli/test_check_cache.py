"""The persistent cache of `shardls check`: a warm run prints exactly what a cold run and a run
with --no-cache print, analyses nothing that has not changed, and analyses again whatever read a
file that changed; broken, hostile or unwritable caches cost nothing but the cache."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from check_helpers import BAD, GOOD, HEADER, check, put, write

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import Diagnostic, Site, Span
from shardls.analysis.settings import Settings
from shardls.cache.codec import CodecError, decode, encode
from shardls.cache.store import CacheStore
from shardls.cli import check_cache
from shardls.cli.check_cache import CACHE_DIR_VARIABLE
from shardls.core import Severity

CHECKOUT = Path(__file__).resolve().parents[2]
FORMATS = ("full", "concise", "json", "github", "sarif", "gitlab", "junit")
HANG = 300


@pytest.fixture(autouse=True)
def _workspace(cache_workspace: None) -> None:
    """Every test here runs in its own folder (`conftest.cache_workspace`)."""


def outputs(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, tuple[int, str, str]]:
    """What check prints in every format (layouts too where they can be shown), and statistics."""
    found = {}
    for name in FORMATS:
        layouts = ("--show-layouts",) if name in ("full", "concise", "json") else ()
        result = check(capsys, "--output-format", name, *layouts, *argv)
        found[name] = (result.code, result.out, result.err)
    result = check(capsys, "--statistics", *argv)
    found["statistics"] = (result.code, result.out, result.err)
    return found


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*/*.json"))


MULTI_FILE: dict[str, str | bytes] = {
    "pyproject.toml": "[tool.shardls]\ndevice-count = 8\n",
    "pkg/__init__.py": "",
    "pkg/sizes.py": "VOCAB = 64\nWIDTH = 16\n",
    "pkg/model.py": HEADER
    + "from pkg.sizes import VOCAB, WIDTH\n"
    + put("table", "(VOCAB, WIDTH)", "'data', 'model'"),
    "pkg/other.py": GOOD,
}
"""A project whose model takes its sizes from another module."""


# -- identical results -------------------------------------------------------------------------


def test_examples_warm_equals_cold_and_no_cache_in_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    shutil.copytree(CHECKOUT / "examples", tmp_path / "examples")
    uncached = outputs(capsys, "examples", "--no-cache")
    assert not (tmp_path / ".shardls_cache").exists()
    analysed.clear()
    cold = outputs(capsys, "examples")
    assert analysed, "the cold run analyses"
    analysed.clear()
    warm = outputs(capsys, "examples")
    assert analysed == [], "a warm run analyses nothing"
    assert warm == cold == uncached
    assert cold["json"][0] == 1 and '"SH001"' in cold["json"][1]  # the examples have findings


def test_multi_file_workspace_warm_equals_cold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    write(tmp_path, MULTI_FILE)
    uncached = outputs(capsys, "--no-cache")
    cold = outputs(capsys)
    analysed.clear()
    warm = outputs(capsys)
    assert analysed == []
    assert warm == cold == uncached
    assert "float32[64@data,16@model]" in cold["concise"][1]


def test_the_cache_lives_in_the_project_folder_marked_as_a_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path, MULTI_FILE)
    (tmp_path / "sub").mkdir()
    os.chdir(tmp_path / "sub")
    check(capsys, "..")
    cache = tmp_path / ".shardls_cache"  # the folder of the pyproject.toml, not the working one
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert len(entries(cache)) == 4
    assert not (tmp_path / "sub" / ".shardls_cache").exists()


def test_cache_dir_flag_over_variable_over_configuration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {**MULTI_FILE, "pyproject.toml": '[tool.shardls]\ncache-dir = "build/cache"\n'})
    check(capsys)
    assert len(entries(tmp_path / "build" / "cache")) == 4
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "from-env"))
    check(capsys)
    assert len(entries(tmp_path / "from-env")) == 4
    check(capsys, "--cache-dir", "from-flag")
    assert len(entries(tmp_path / "from-flag")) == 4
    assert not (tmp_path / ".shardls_cache").exists()


# -- invalidation ------------------------------------------------------------------------------


def test_editing_an_imported_file_invalidates_its_importers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    write(tmp_path, MULTI_FILE)
    check(capsys)
    write(tmp_path, {"pkg/sizes.py": "VOCAB = 65\nWIDTH = 16\n"})
    analysed.clear()
    warm = check(capsys, "--output-format", "concise")
    assert sorted(analysed) == ["model.py", "sizes.py"]  # not other.py nor __init__.py
    assert "pkg/model.py:7:" in warm.out and "SH001" in warm.out
    assert warm == check(capsys, "--output-format", "concise", "--no-cache")


def test_a_new_file_that_an_import_would_find_first_invalidates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """`import sizes` in sub/model.py finds sub/sizes.py until a sizes.py appears at the root,
    which imports search first: a file that did not exist was part of the result too."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.shardls]\n",
            "sub/sizes.py": "VOCAB = 64\n",
            "sub/model.py": HEADER + "import sizes\n" + put("t", "(sizes.VOCAB, 16)", "'data'"),
        },
    )
    first = check(capsys, "--output-format", "concise", "sub/model.py")
    assert "SH001" not in first.out
    write(tmp_path, {"sizes.py": "VOCAB = 63\n"})
    analysed.clear()
    second = check(capsys, "--output-format", "concise", "sub/model.py")
    assert analysed == ["model.py"]
    assert "SH001" in second.out
    assert second == check(capsys, "--output-format", "concise", "--no-cache", "sub/model.py")


def test_a_changed_workspace_mesh_invalidates_files_that_use_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """layers.py builds no mesh, so its sites take the only mesh of the workspace (train.py's):
    the workspace search is one of its reads."""
    layers = (
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n\n"
        "def layer(mesh):\n"
        "    return jax.device_put(jnp.zeros((6, 16)), jax.sharding.NamedSharding(mesh, P('data')))\n"
    )
    train = "import jax\nfrom layers import layer\n\nmesh = jax.make_mesh(({n}, 4), ('data', 'model'))\n"
    write(
        tmp_path, {"pyproject.toml": "[tool.shardls]\n", "layers.py": layers, "train.py": train.format(n=2)}
    )
    first = check(capsys, "--output-format", "json", "--show-layouts")
    write(tmp_path, {"train.py": train.format(n=4)})
    analysed.clear()
    second = check(capsys, "--output-format", "json", "--show-layouts")
    assert sorted(analysed) == ["layers.py", "train.py"]
    assert first.out != second.out
    assert second == check(capsys, "--output-format", "json", "--show-layouts", "--no-cache")


def test_a_lone_surrogate_survives_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """An axis name with a lone surrogate (as an undecodable byte becomes) is stored escaped."""
    source = HEADER + put("y", "(9, 8)", "'\\udcff'")
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "odd.py": source})
    cold = outputs(capsys)
    assert len(entries(tmp_path / ".shardls_cache")) == 1
    analysed.clear()
    assert outputs(capsys) == cold
    assert analysed == []


WORKSPACE_MESH: dict[str, str | bytes] = {
    "pyproject.toml": "[tool.shardls]\n",
    "layers.py": (
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n\n"
        "def layer(mesh):\n"
        "    return jax.device_put(jnp.zeros((6, 16)), jax.sharding.NamedSharding(mesh, P('data')))\n"
    ),
    "train.py": "import jax\nimport sizes\n\nmesh = jax.make_mesh((sizes.DATA, 4), ('data', 'model'))\n",
    "sizes.py": "DATA = 2\n",
    "notes.py": "TEXT = 'nothing about meshes'\n",
}
"""layers.py builds no mesh: its site takes the workspace's only mesh, which train.py builds
from a size in sizes.py."""


@pytest.mark.parametrize(
    ("change", "again"),
    [
        # train.py reads sizes.py; the files without a mesh rest on the search, whose mesh changed.
        ({"sizes.py": "DATA = 4\n"}, ["layers.py", "notes.py", "sizes.py", "train.py"]),
        # The search read sizes.py, but the mesh it finds is the same: only what imports it.
        ({"sizes.py": "DATA = 2\nMORE = 3\n"}, ["sizes.py", "train.py"]),
        # A line added to the file that builds the mesh, below it: the mesh found is the same.
        ({"train.py": str(WORKSPACE_MESH["train.py"]) + "STEPS = 10\n"}, ["train.py"]),
        # The search did not read notes.py (it mentions no mesh): only notes.py itself changed.
        ({"notes.py": "TEXT = 'still nothing'\n"}, ["notes.py"]),
        # The search finds one more file; train.py, with its own mesh, did not search.
        (
            {"new.py": "import jax\nother = jax.make_mesh((8,), ('x',))\n"},
            ["layers.py", "new.py", "notes.py", "sizes.py"],
        ),
    ],
    ids=[
        "what-the-mesh-reads",
        "the-same-mesh-from-an-edited-import",
        "the-same-mesh-from-an-edited-script",
        "an-unrelated-file",
        "a-new-mesh",
    ],
)
def test_the_search_for_the_workspace_mesh_is_keyed_by_its_result(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    analysed: list[str],
    change: dict[str, str | bytes],
    again: list[str],
) -> None:
    write(tmp_path, WORKSPACE_MESH)
    check(capsys, "--output-format", "json", "--show-layouts")
    write(tmp_path, change)
    analysed.clear()
    warm = check(capsys, "--output-format", "json", "--show-layouts")
    assert sorted(analysed) == again
    assert warm == check(capsys, "--output-format", "json", "--show-layouts", "--no-cache")


def test_changing_settings_invalidates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    write(tmp_path, MULTI_FILE)
    check(capsys)
    for argv in (("--device-count", "16"), ("--select", "SH001"), ("--mesh", "data=4,model=2")):
        analysed.clear()
        warm = check(capsys, "--output-format", "json", "--show-layouts", *argv)
        assert len(analysed) == 4, argv
        assert warm == check(capsys, "--output-format", "json", "--show-layouts", "--no-cache", *argv)
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\ndevice-count = 4\n"})
    analysed.clear()
    check(capsys)
    assert len(analysed) == 4


def test_fix_then_check_analyses_the_new_content(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    typo = HEADER + put("z", "(8, 16)", "'data', 'modle'")
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "typo.py": typo})
    check(capsys)
    check(capsys, "--fix", "--unsafe-fixes")
    assert "'model'" in (tmp_path / "typo.py").read_text()
    analysed.clear()
    after = check(capsys, "--output-format", "concise")
    assert analysed == ["typo.py"]
    assert after == check(capsys, "--output-format", "concise", "--no-cache")


def test_standard_input_is_neither_read_from_nor_written_to_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, analysed: list[str]
) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "bad.py": BAD})
    check(capsys, "bad.py")
    cache = tmp_path / ".shardls_cache"
    before = {path: path.read_bytes() for path in entries(cache)}
    for _ in range(2):
        monkeypatch.setattr("sys.stdin", _stdin(BAD))
        analysed.clear()
        result = check(capsys, "--stdin-filename", "bad.py", "--output-format", "concise")
        assert analysed == ["bad.py"]
        assert "SH001" in result.out
    assert {path: path.read_bytes() for path in entries(cache)} == before


# -- broken, hostile and unwritable caches -----------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{",
        b"[1, 2, 3]",
        b'{"format": 1}',
        b"[" * 100_000 + b"]" * 100_000,
        b"\xff\xfe not json",
    ],
    ids=["empty", "truncated", "not-an-entry", "no-fields", "deeply-nested", "binary"],
)
def test_corrupt_entries_are_misses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str], damage: bytes
) -> None:
    write(tmp_path, MULTI_FILE)
    cold = outputs(capsys)
    for entry in entries(tmp_path / ".shardls_cache"):
        entry.write_bytes(damage)
    analysed.clear()
    assert outputs(capsys) == cold
    assert len(analysed) == 4  # analysed again by the first format's run, then cached


def test_hostile_entries_are_ignored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """Entries that parse but lie about their types, point outside the file or depend on
    nonsense are misses, never a crash or a traceback."""
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "bad.py": BAD})
    cold = check(capsys, "--output-format", "json", "--show-layouts")
    [path] = entries(tmp_path / ".shardls_cache")
    original = json.loads(path.read_text())
    span = {"line": 10_000, "column": 0, "end_line": 10_001, "end_column": 1}
    lies = [
        {**original, "diagnostics": [{"span": "x"}]},
        {**original, "diagnostics": [{**original["diagnostics"][0], "severity": "catastrophic"}]},
        {**original, "diagnostics": [{**original["diagnostics"][0], "span": span}]},
        {**original, "diagnostics": [{**original["diagnostics"][0], "__class__": "os.system"}]},
        {**original, "sites": [{**original["sites"][0], "layout": {"mesh": 1}}]},
        {**original, "dependencies": [["exec", "rm -rf /"]]},
        {**original, "dependencies": [["file", str(tmp_path / "nowhere.py"), True]]},
        {**original, "dependencies": [["file", str(tmp_path / "bad.py"), "yes"]]},
        {**original, "dependencies": [["file", 3, True]]},
        {**original, "dependencies": [["file", str(tmp_path / "bad.py")]]},
        {**original, "dependencies": "everything"},
        {**original, "format": 0},
    ]
    for lie in lies:
        path.write_text(json.dumps(lie))
        analysed.clear()
        assert check(capsys, "--output-format", "json", "--show-layouts") == cold
        assert analysed == ["bad.py"], lie


def test_an_unwritable_cache_folder_means_no_cache_and_no_complaint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    write(tmp_path, MULTI_FILE)
    (tmp_path / "a-file").write_text("not a folder")
    uncached = check(capsys, "--output-format", "concise", "--no-cache")
    for _ in range(2):
        analysed.clear()
        assert check(capsys, "--output-format", "concise", "--cache-dir", "a-file/cache") == uncached
        assert len(analysed) == 4
    assert (tmp_path / "a-file").read_text() == "not a folder"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions bind only non-root users")
def test_a_read_only_cache_is_read_but_not_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    write(tmp_path, MULTI_FILE)
    cold = check(capsys, "--output-format", "concise")
    cache = tmp_path / ".shardls_cache"
    folders = [cache, *(p for p in cache.rglob("*") if p.is_dir())]
    for folder in folders:
        folder.chmod(0o555)
    try:
        write(tmp_path, {"pkg/other.py": BAD})
        analysed.clear()
        warm = check(capsys, "--output-format", "concise")
        assert analysed == ["other.py"] and warm.err == ""
        assert warm == check(capsys, "--output-format", "concise", "--no-cache")
    finally:
        for folder in folders:
            folder.chmod(0o755)
    assert cold != warm


def test_a_cache_that_refuses_writes_is_still_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, analysed: list[str]
) -> None:
    """As a read-only folder behaves for a user without root: every write fails (here for root
    too), the entries there are used, nothing is said about it."""
    write(tmp_path, MULTI_FILE)
    check(capsys, "--output-format", "concise")
    before = entries(tmp_path / ".shardls_cache")

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # what the store creates entries with
    check_cache._STORES.clear()  # a new process: it has not written there yet
    write(tmp_path, {"pkg/sizes.py": "VOCAB = 65\nWIDTH = 16\n"})
    analysed.clear()
    warm = check(capsys, "--output-format", "concise")
    assert sorted(analysed) == ["model.py", "sizes.py"] and warm.err == ""
    assert "pkg/model.py:7:" in warm.out
    assert warm == check(capsys, "--output-format", "concise", "--no-cache")
    assert entries(tmp_path / ".shardls_cache") == before


def test_two_checks_at_once_share_a_cache(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two processes fill one cache at the same time (each file written by both): each prints
    the uncached result, and the cache they leave serves a third run completely."""
    files: dict[str, str | bytes] = {f"m{i:02}.py": BAD if i % 3 == 0 else GOOD for i in range(40)}
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", **files})
    uncached = check(capsys, "--output-format", "json", "--show-layouts", "--no-cache")
    command = [sys.executable, "-I", "-m", "shardls", "check", "--output-format", "json", "--show-layouts"]
    environment = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    environment.pop(CACHE_DIR_VARIABLE, None)
    runs = [
        subprocess.Popen(
            command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    for process in runs:
        out, err = process.communicate(timeout=HANG)
        assert (process.returncode, out.decode(), err.decode()) == (uncached.code, uncached.out, "")
    assert len(entries(tmp_path / ".shardls_cache")) == 40
    assert not list((tmp_path / ".shardls_cache").rglob(".tmp-*"))
    assert check(capsys, "--output-format", "json", "--show-layouts") == uncached


# -- the parts ---------------------------------------------------------------------------------


def test_facts_survive_the_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    """Every site and diagnostic of the examples decodes to an equal value (tuples stay tuples,
    enums enums, layouts are the core's)."""
    analyzer = Analyzer()
    for path in sorted((CHECKOUT / "examples").glob("*.py")):
        analysis = analyzer.analyze(str(path), path.read_text())
        for hint, values in (
            (tuple[Site, ...], analysis.sites),
            (tuple[Diagnostic, ...], analysis.diagnostics),
        ):
            data = json.loads(json.dumps(encode(hint, values)))
            assert decode(hint, data) == values


def test_what_json_cannot_hold_is_not_cached() -> None:
    odd = Diagnostic(Span(0, 0, 0, 1), "SH001", Severity.ERROR, "m", data={"x": {1, 2}})
    with pytest.raises(CodecError):
        encode(Diagnostic, odd)
    with pytest.raises(CodecError):
        encode(_Unresolvable, _Unresolvable(1))  # a hint that names nothing importable
    with pytest.raises(CodecError):
        decode(Span, {"line": True, "column": 0, "end_line": 0, "end_column": 0})
    with pytest.raises(CodecError):
        decode(Span, {"line": 0, "column": 0, "end_line": 0, "end_column": 0, "extra": 1})


def test_the_cache_may_be_deleted_between_and_during_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """--watch keeps one process: a cache deleted while it runs is created again."""
    write(tmp_path, MULTI_FILE)
    cold = check(capsys, "--output-format", "concise")
    shutil.rmtree(tmp_path / ".shardls_cache")
    analysed.clear()
    assert check(capsys, "--output-format", "concise") == cold
    assert len(analysed) == 4
    assert len(entries(tmp_path / ".shardls_cache")) == 4
    assert (tmp_path / ".shardls_cache" / "CACHEDIR.TAG").is_file()


def test_pruning_keeps_the_cache_within_its_bound_and_deletes_only_entries(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "cache", max_bytes=10_000)
    for i in range(40):
        store.write(f"{i:064x}", {"payload": "x" * 1_000})
    foreign = store.folder / "00" / "notes.txt"
    foreign.write_text("not shardls's")
    store.prune()
    kept = entries(tmp_path / "cache")
    assert sum(path.stat().st_size for path in kept) <= 10_000
    assert 0 < len(kept) < 40
    assert foreign.read_text() == "not shardls's"
    assert store.read(f"{39:064x}") == {"payload": "x" * 1_000}  # the newest survive


@dataclass(frozen=True)
class _Unresolvable:
    value: NotDefinedAnywhere  # type: ignore[name-defined]  # noqa: F821


def _stdin(text: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")


def test_the_uses_of_a_named_sharding_survive_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, analysed: list[str]
) -> None:
    """A `named_sharding` site holds the sites of its uses (sites inside a site): a warm run reads
    them back and prints exactly what --no-cache prints, without analysing the file again."""
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "x = jax.device_put(jnp.zeros((8, 16)), sharding)\n"
        "y = jax.device_put(jnp.zeros((8, 32)), sharding)\n"
    )
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "shared.py": source})
    cold = check(capsys, "--output-format", "json", "--show-layouts")
    analysed.clear()
    warm = check(capsys, "--output-format", "json", "--show-layouts")
    assert analysed == []
    assert warm == cold == check(capsys, "--output-format", "json", "--show-layouts", "--no-cache")
    (built,) = [e for e in json.loads(warm.out)["layouts"] if e["kind"] == "named_sharding"]
    assert [(use["name"], use["shard_shape"]) for use in built["uses"]] == [("x", [4, 16]), ("y", [4, 32])]


def test_the_settings_are_encoded_once_and_keys_are_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file of a folder has the same settings: encoding them for each file's key was 7 ms
    of a warm run over 134 files. The key is the hash json.dumps gave with them in the list."""
    settings = Settings(device_count=8, ignore=frozenset({"SH013"}))
    encoded: list[object] = []

    def counted(kind: object, value: object) -> object:
        encoded.append(value)
        return encode(kind, value)  # type: ignore[arg-type]

    monkeypatch.setattr(check_cache, "encode", counted)
    check_cache._settings_json.cache_clear()
    keys = [check_cache.entry_key(Path(f"m{i}.py"), [Path("/r")], settings, "x = 1") for i in range(3)]
    assert encoded == [settings]
    header = json.dumps(
        [3, check_cache._build(), "m2.py", os.path.abspath("m2.py"), ["/r"], encode(Settings, settings)],
        sort_keys=True,
    )
    assert keys[2] == hashlib.sha256(header.encode() + b"\0x = 1").hexdigest()
