"""JAX as the judge of the corpus: run tagged programs under real JAX and report what JAX did.

The corpus programs (tests/corpus/) mark what they claim with trailing comments:

* ``x = jax.device_put(...)  # expect: x`` -- after this statement, ``x`` is a sharded value whose
  per-device shape the static analysis must reproduce (arrays, ShapeDtypeStructs, NNX modules and
  variables; inside a ``shard_map`` body, the traced block);
* ``bad = jax.device_put(...)  # expect-error: SH001`` -- JAX raises in this statement, and the
  analysis must put an error with that code on it;
* ``with mesh:  # expect-warning: SH203`` -- JAX accepts it, and the analysis must warn with that code;
* ``s = NamedSharding(mesh, P("data"))  # expect-uses: x, y`` (or on the ``return`` of a helper that
  builds one) -- the arrays ``x`` and ``y`` (each tagged ``# expect: x`` where it is made) are laid
  out with this sharding, and the analysis must list them as its uses, with their shape when
  they agree on one.

Nothing here hard-codes an answer: the shapes and the errors come from running the programs. The
test side (test_corpus.py) only compares them with shardls.

How a program runs (``python jax_oracle.py < request.json``, as a subprocess, because the fake
device count must be fixed before jax is imported):

* each program gets a fresh process (``os.fork`` after importing jax, before any backend exists;
  sequential in-process runs where fork is missing), so a global ``jax.set_mesh`` or a Flax
  setting cannot leak into the next program, and PARALLEL programs run at a time; anything a
  program prints goes to stderr, so stdout carries only the JSON answer;
* top-level statements run one at a time, so an error statement is caught, recorded with the line
  JAX raised from (the innermost frame in the program), and the program goes on;
* each ``expect`` tag is compiled into a capture call right after its statement (before it, for a
  ``return``), so values inside functions, ``with`` blocks and traced bodies are seen too.

This module imports neither jax nor shardls at the top: the tests import it for the tag parser
and for :func:`run_oracle`.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEVICE_COUNT = 8
ORACLE_ENV = {
    # Cheaper CPU code generation: layouts are decided before the backend, so only time changes.
    "XLA_FLAGS": f"--xla_force_host_platform_device_count={DEVICE_COUNT} "
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true",
    "JAX_PLATFORMS": "cpu",
}
PARALLEL = max(2, min(4, os.cpu_count() or 1))
"""Programs run at the same time (each compiles its own small computations)."""
CHILD_SECONDS = 120
"""A program still running after this long is killed (and reported as dead)."""

_TAG = re.compile(r"#\s*(?P<kind>expect(?:-error|-warning|-uses)?)\s*:\s*(?P<body>[^#]*)")
_CAPTURE = "__shardls_oracle_capture__"
BUILT = "(sharding built here)"
"""The name an ``expect-uses`` statement's sharding is captured under."""


# -- tags (pure: shared by the runner and the tests) -------------------------------------------


@dataclass(frozen=True)
class Tag:
    """One ``# expect...:`` comment, tied to the statement it sits on (all lines 0-based)."""

    kind: str
    """``expect``, ``expect-error``, ``expect-warning`` or ``expect-uses``."""
    line: int
    items: tuple[str, ...]
    """Names (``expect``, ``expect-uses``) or rule codes (the other two)."""
    start: int
    end: int
    """The statement's lines: its whole extent, or only the header of a compound statement."""

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end


def parse_tags(source: str) -> list[Tag]:
    """Every tag of a program, with the statement each belongs to.

    Comments are found with `tokenize`, so a ``#`` inside a string never reads as a tag. A tag
    belongs to the innermost statement whose lines contain it; for ``with``/``if``/``for``/``def``
    only the header counts, so a tag on a block line never swallows the whole block.
    """
    ranges = statement_ranges(ast.parse(source))
    tags = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _TAG.search(token.string)
        if match is None:
            continue
        line = token.start[0] - 1
        items = tuple(i.strip() for i in match.group("body").split(",") if i.strip())
        inside = [r for r in ranges if r[0] <= line <= r[1]]
        if not inside or not items:
            raise ValueError(f"line {line + 1}: tag {token.string!r} is not on a statement or is empty")
        start, end = min(inside, key=lambda r: r[1] - r[0])
        tags.append(Tag(match.group("kind"), line, items, start, end))
    return tags


def statement_ranges(tree: ast.AST) -> list[tuple[int, int]]:
    """0-based (first, last) lines of every statement; compound statements give their header
    (decorators included), which ends on the line before their first body statement."""
    ranges = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = (node.end_lineno or node.lineno) - 1
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = max(node.lineno - 1, body[0].lineno - 2)
        ranges.append((start, end))
    return ranges


# -- the parent side: run the subprocess ----------------------------------------------------------


def shared_json(directory: Path, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()` once per `key` for every process sharing `directory` (pytest-xdist workers):
    the first one computes under a lock and stores JSON, the others wait and read it."""
    cache = directory / f"{key}.json"
    lock = directory / f"{key}.lock"
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): every worker computes for itself
        return compute()
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            if cache.exists():
                return json.loads(cache.read_text())
            result = compute()
            cache.write_text(json.dumps(result))
            return result
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_oracle(programs: Sequence[Path], root: Path, timeout: float = 1200) -> dict[str, dict[str, Any]]:
    """What JAX did in each program, keyed by its path relative to `root` (POSIX separators).

    `root` goes on ``sys.path`` so a program inside a package directory imports its siblings the
    way ``python -m package.module`` would. `timeout` is a hang limit, not a speed bound: the
    corpus's programs take a minute on a quiet machine and several on a busy 2-core CI runner.
    """
    request = {"root": str(root), "programs": [str(p) for p in programs]}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve())],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env={**os.environ, **ORACLE_ENV},
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the JAX oracle failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    results: dict[str, dict[str, Any]] = {}
    for entry in json.loads(proc.stdout)["results"]:
        results[Path(entry["path"]).resolve().relative_to(root.resolve()).as_posix()] = entry
    return results


# -- the child side: run programs under JAX ------------------------------------------------------


def _instrument(tree: ast.Module, tags: Iterable[Tag]) -> ast.Module:
    """Insert ``__capture__(line, 'name', lambda: name)`` after (or before a return) each tagged
    statement; for ``expect-uses``, a capture of the sharding it builds (the name it assigns, or
    the value it returns) under the name `BUILT`."""
    wanted: dict[int, list[Tag]] = {}
    for tag in tags:
        if tag.kind in ("expect", "expect-uses"):
            wanted.setdefault(tag.start, []).append(tag)

    class Rewriter(ast.NodeTransformer):
        def generic_visit(self, node: ast.AST) -> ast.AST:
            super().generic_visit(node)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(node, field, self._with_captures(block))
            return node

        @staticmethod
        def _with_captures(block: list[ast.stmt]) -> list[ast.stmt]:
            out: list[ast.stmt] = []
            for statement in block:
                captures = []
                for tag in wanted.get(statement.lineno - 1, []):
                    if tag.kind == "expect-uses":
                        built = _built(statement)
                        call = ast.parse(f"{_CAPTURE}({tag.line}, {BUILT!r}, lambda: {built})").body[0]
                        captures.append(ast.copy_location(call, statement))
                        continue
                    for name in tag.items:
                        call = ast.parse(f"{_CAPTURE}({tag.line}, {name!r}, lambda: {name})").body[0]
                        captures.append(ast.copy_location(call, statement))
                if isinstance(statement, ast.Return):
                    out.extend([*captures, statement])
                else:
                    out.extend([statement, *captures])
            return out

    rewritten = Rewriter().visit(tree)
    assert isinstance(rewritten, ast.Module)
    return ast.fix_missing_locations(rewritten)


def _built(statement: ast.stmt) -> str:
    """The sharding an ``expect-uses`` statement builds: the name it assigns, or what it returns."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return ast.unparse(statement.targets[0])
    if isinstance(statement, ast.Return) and statement.value is not None:
        return ast.unparse(statement.value)
    raise ValueError(f"line {statement.lineno}: expect-uses needs `name = ...` or `return ...`")


def _describe(value: Any) -> dict[str, Any]:
    """What JAX says about one captured value: its global and per-device shapes."""
    import jax
    from flax import nnx

    if isinstance(value, nnx.Module):
        params = {}
        for path, variable in nnx.to_flat_state(nnx.state(value, nnx.Param)):
            params[".".join(map(str, path))] = _describe(variable.get_value())
        return {"kind": "module", "params": params}
    if isinstance(value, nnx.Variable):
        return _describe(value.get_value())
    if isinstance(value, jax.core.Tracer) and isinstance(getattr(value, "primal", None), jax.Array):
        # Under `jax.grad` outside jit the primal is a real, sharded array.
        return _describe(value.primal)
    if isinstance(value, jax.core.Tracer):
        # Inside a shard_map body the traced value *is* one device's block.
        return {"kind": "traced", "shape": list(value.shape)}
    if isinstance(value, jax.Array):
        first = value.addressable_shards[0].data.shape
        computed = value.sharding.shard_shape(value.shape)
        if tuple(first) != tuple(computed):
            raise AssertionError(f"shard data {first} differs from sharding.shard_shape {computed}")
        return {
            "kind": "array",
            "shape": list(value.shape),
            "shard_shape": list(first),
            "spec": str(getattr(value.sharding, "spec", None)),
            "sharding": repr(value.sharding),
        }
    if isinstance(value, jax.ShapeDtypeStruct) and value.sharding is not None:
        return {
            "kind": "abstract",
            "shape": list(value.shape),
            "shard_shape": list(value.sharding.shard_shape(value.shape)),
            "spec": str(getattr(value.sharding, "spec", None)),
            "sharding": repr(value.sharding),
        }
    if isinstance(value, jax.sharding.NamedSharding):
        return {"kind": "sharding", "sharding": repr(value)}
    return {"kind": "other", "type": type(value).__name__, "repr": repr(value)[:200]}


def _error_line(exc: BaseException, path: str) -> int | None:
    """0-based line of the innermost frame of the program that the exception passed through."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == path:
            line = lineno - 1
    return line


def run_program(path: str, root: str) -> dict[str, Any]:
    """Run one program statement by statement and record captures, errors and warnings."""
    import warnings

    source = Path(path).read_text()
    tags = parse_tags(source)
    tree = _instrument(ast.parse(source, path), tags)
    relative = Path(path).resolve().relative_to(Path(root).resolve())
    package = ".".join(relative.parent.parts) if (Path(path).parent / "__init__.py").exists() else ""
    captures: list[dict[str, Any]] = []

    def capture(line: int, name: str, thunk: Any) -> None:
        try:
            described = _describe(thunk())
        except Exception as exc:  # a failed capture is a fact to report
            described = {"kind": "capture-error", "error": f"{type(exc).__name__}: {exc}"}
        captures.append({"line": line, "name": name, **described})

    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__file__": path,
        "__package__": package or None,
        "__builtins__": __builtins__,
        _CAPTURE: capture,
    }
    errors: list[dict[str, Any]] = []
    caught: list[dict[str, Any]] = []
    sys.argv = [path]  # as if run as `python program.py`: argparse sees no arguments
    for statement in tree.body:
        code = compile(ast.Module(body=[statement], type_ignores=[]), path, "exec")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                exec(code, namespace)
            except Exception as exc:  # JAX's verdict, recorded for the test
                errors.append(
                    {
                        "line": _error_line(exc, path),
                        "statement": statement.lineno - 1,
                        "type": type(exc).__name__,
                        "message": str(exc)[:600],
                    }
                )
        for warning in seen:
            caught.append(
                {
                    "line": warning.lineno - 1 if warning.filename == path else statement.lineno - 1,
                    "type": warning.category.__name__,
                    "message": str(warning.message)[:300],
                }
            )
    return {"path": path, "captures": captures, "errors": errors, "warnings": caught}


def _run_isolated(path: str, root: str) -> dict[str, Any]:
    """`run_program` in a forked child when possible (a clean JAX state per program)."""
    started = time.process_time()
    try:
        return {**run_program(path, root), "cpu_seconds": round(time.process_time() - started, 2)}
    except Exception:  # the program could not even be prepared
        return {"path": path, "fatal": traceback.format_exc()[-3000:]}


def _main() -> None:
    # Keep stdout for the answer: whatever the programs (or JAX) print goes to stderr instead.
    answer = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.load(sys.stdin)
    root = request["root"]
    sys.path.insert(0, root)
    # Import jax and flax once, before any backend exists, so forked children start warm and clean.
    import jax  # noqa: F401
    from flax import nnx  # noqa: F401

    programs: list[str] = request["programs"]
    results: dict[str, dict[str, Any]] = {}
    if not hasattr(os, "fork"):
        for path in programs:
            results[path] = _run_isolated(path, root)
    else:
        # Children write their JSON to files, so a large result can never block on a pipe.
        with tempfile.TemporaryDirectory() as scratch:
            running: dict[int, tuple[str, Path]] = {}
            pending = list(enumerate(programs))
            while pending or running:
                while pending and len(running) < PARALLEL:
                    index, path = pending.pop(0)
                    out = Path(scratch) / f"{index}.json"
                    pid = os.fork()
                    if pid == 0:  # the child: run, write, leave without any cleanup
                        if hasattr(signal, "alarm"):
                            signal.alarm(CHILD_SECONDS)
                        try:
                            out.write_text(json.dumps(_run_isolated(path, root)))
                        finally:
                            os._exit(0)
                    running[pid] = (path, out)
                pid, status = os.wait()
                path, out = running.pop(pid)
                if out.exists():
                    results[path] = json.loads(out.read_text())
                else:
                    results[path] = {"path": path, "fatal": f"the child died (wait status {status})"}
    json.dump({"results": [results[p] for p in programs]}, answer)
    answer.close()


if __name__ == "__main__":
    _main()
