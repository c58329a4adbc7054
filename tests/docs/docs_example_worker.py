"""Run the ```python examples of the rule pages under real JAX and report what each one did, as JSON.

Usage: ``XLA_FLAGS=--xla_force_host_platform_device_count=8 python docs_example_worker.py OUT < blocks.json``

The device count must be fixed before jax is imported, so the test runs this in a subprocess.
Input: a list of ``{"id": ..., "code": ...}``. Output (written to OUT, since examples print):
one ``{"id", "raised": [class names of the exception's MRO] | None, "message", "warnings":
[[category MRO names, message], ...], "stdout"}`` per block. Each block runs in a fresh
namespace; jax, flax and numpy are imported once up front (their own import-time warnings are
not attributed to the first block), and a global `jax.set_mesh(...)` is undone after each block.
This file reports facts only; the judgement is in test_rule_examples.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy
import numpy  # noqa: F401

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from flax import nnx  # noqa: F401
    from jax.experimental import mesh_utils  # noqa: F401


def _names(cls: type) -> list[str]:
    return [c.__name__ for c in cls.__mro__]


def run(block_id: str, code: str) -> dict[str, object]:
    out = io.StringIO()
    raised: list[str] | None = None
    message = ""
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(code, block_id, "exec"), {"__name__": "__doc_example__"})
        except BaseException as error:  # the examples are meant to raise
            raised = _names(type(error))
            message = str(error)
    with contextlib.suppress(Exception):
        jax.set_mesh(None)
    return {
        "id": block_id,
        "raised": raised,
        "message": message,
        "warnings": [[_names(w.category), str(w.message)] for w in caught],
        "stdout": out.getvalue(),
    }


def main() -> None:
    blocks = json.load(sys.stdin)
    results = [run(block["id"], block["code"]) for block in blocks]
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
