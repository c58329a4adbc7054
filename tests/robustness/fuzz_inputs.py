"""Inputs for fuzzing: the example and corpus files, mutations of them, and generated programs.

Shared by tests/robustness/test_fuzz.py (a CI-sized run) and benchmarks/fuzz_long.py (a long
run). Mutations are drawn from a seeded `random.Random`, so a failure is reproducible from its
seed; generated programs come from hypothesis strategies.
"""

from __future__ import annotations

import io
import random
import tokenize
from collections.abc import Iterator
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


def seed_files() -> list[Path]:
    """Every example and test-corpus program."""
    return sorted({*ROOT.glob("examples/*.py"), *ROOT.glob("tests/corpus/**/*.py")})


def truncations(text: str) -> Iterator[str]:
    """The text cut after each of its lines, and in the middle of each line."""
    lines = text.split("\n")
    for number in range(len(lines)):
        yield "\n".join(lines[:number])
        yield "\n".join(lines[:number]) + "\n" + lines[number][: len(lines[number]) // 2]


def _tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the text's tokens (as far as the tokenizer gets)."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    found: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT) or token.string == "":
                continue
            (row, col), (end_row, end_col) = token.start, token.end
            found.append((starts[row - 1] + col, starts[end_row - 1] + end_col))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


_BRACKETS = "()[]{}"
_NOISE = ["\x00", "\ufeff", "\r", "\t", "\x0c", "\u2028", "\ud800", "𝔵", "\\", "'", '"""', "#", ":", "@", "*"]


def mutate(text: str, rng: random.Random) -> str:
    """One random mutation: delete, duplicate or move a token, swap brackets, insert noise."""
    tokens = _tokens(text)
    kind = rng.randrange(7)
    if tokens and kind == 0:
        start, end = rng.choice(tokens)
        return text[:start] + text[end:]
    if tokens and kind == 1:
        start, end = rng.choice(tokens)
        return text[:end] + " " + text[start:end] + text[end:]
    if tokens and kind == 2:
        (a, b), (c, d) = sorted(rng.sample(tokens, 2)) if len(tokens) > 1 else (tokens[0], tokens[0])
        if b <= c:
            return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    if kind == 3:
        table = str.maketrans(_BRACKETS, "".join(rng.sample(_BRACKETS, len(_BRACKETS))))
        start = rng.randrange(len(text) + 1)
        return (
            text[:start] + text[start : start + rng.randrange(1, 400)].translate(table) + text[start + 400 :]
        )
    if kind == 4:
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))
        at = rng.randrange(len(text) + 1)
        return text[:at] + noise.decode("utf-8", errors="replace") + text[at:]
    if kind == 5:
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(_NOISE) * rng.randrange(1, 4) + text[at:]
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    return "\n".join(lines[:at] + [lines[at]] * rng.randrange(2, 6) + lines[at + 1 :])


def mutations(text: str, rng: random.Random, count: int) -> Iterator[str]:
    """`count` mutants, each one to three mutations away from the text."""
    for _ in range(count):
        mutant = text
        for _ in range(rng.randrange(1, 4)):
            mutant = mutate(mutant, rng)
        yield mutant


# -- JAX-flavoured programs ---------------------------------------------------------------------

_AXES = st.sampled_from(
    ["'data'", "'model'", "'fsdp'", "'x'", "None", "('data', 'model')", "P.UNCONSTRAINED"]
)
_NAMES = st.sampled_from(["mesh", "spec", "x", "n", "cfg", "Config", "f", "shape", "self", "jnp", "jax", "P"])
_INTS = st.one_of(st.integers(-3, 64), st.sampled_from(["10**12", "2**10**10", "jax.device_count()", "n"]))


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(_AXES, _NAMES, _INTS.map(str))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        args = st.lists(inner, max_size=4).map(", ".join)
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "*", "//", "**", "%", "-", "<<"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            args.map(lambda a: f"P({a})"),
            args.map(lambda a: f"({a},)"),
            args.map(lambda a: f"[{a}]"),
            st.tuples(_NAMES, args).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, _NAMES).map(lambda t: f"{t[0]}.{t[1]}"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
            inner.map(lambda e: f"[{e} for i in range(n)]"),
            inner.map(lambda e: f"(*{e},)"),
            st.tuples(inner, inner).map(lambda t: f"jnp.zeros({t[0]}, out_sharding={t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"NamedSharding({t[0]}, {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"jax.device_put({t[0]}, {t[1]})"),
        )

    return st.recursive(leaves, extend, max_leaves=24)


EXPRESSIONS = _expressions()


def _statements() -> st.SearchStrategy[list[str]]:
    name = _NAMES
    simple = st.one_of(
        st.tuples(name, EXPRESSIONS).map(lambda t: f"{t[0]} = {t[1]}"),
        st.tuples(name, EXPRESSIONS).map(lambda t: f"{t[0]} += {t[1]}"),
        st.tuples(
            st.lists(_INTS.map(str), min_size=1, max_size=3), st.lists(_AXES, min_size=1, max_size=3)
        ).map(lambda t: f"mesh = jax.make_mesh(({', '.join(t[0])},), ({', '.join(t[1])},))"),
        st.tuples(name, EXPRESSIONS, EXPRESSIONS).map(
            lambda t: f"{t[0]} = jax.device_put(jnp.zeros({t[1]}), NamedSharding(mesh, P({t[2]})))"
        ),
        EXPRESSIONS.map(lambda e: f"jax.set_mesh({e})"),
        st.just("from dataclasses import dataclass"),
        st.just("from flax import nnx"),
        st.just("import numpy as np"),
        st.sampled_from(["from . import model", "from .config import *", "import config as cfg"]),
    )

    def block(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
        def indent(lines: list[str]) -> list[str]:
            return ["    " + line for line in lines] or ["    pass"]

        return st.one_of(
            st.tuples(name, st.lists(_NAMES, max_size=3), inner, EXPRESSIONS).map(
                lambda t: [
                    f"def {t[0]}({', '.join(dict.fromkeys(t[1]))}):",
                    *indent(t[2]),
                    f"    return {t[3]}",
                ]
            ),
            st.tuples(name, inner).map(lambda t: ["@dataclass", f"class {t[0]}:", *indent(t[1])]),
            st.tuples(name, inner).map(lambda t: [f"class {t[0]}(nnx.Module):", *indent(t[1])]),
            st.tuples(EXPRESSIONS, inner).map(lambda t: [f"with jax.set_mesh({t[0]}):", *indent(t[1])]),
            st.tuples(EXPRESSIONS, inner, inner).map(
                lambda t: [f"if {t[0]}:", *indent(t[1]), "else:", *indent(t[2])]
            ),
            st.tuples(name, EXPRESSIONS, inner).map(lambda t: [f"for {t[0]} in {t[1]}:", *indent(t[2])]),
            st.tuples(name, EXPRESSIONS).map(lambda t: [f"{t[0]}: int = {t[1]}"]),
        )

    return st.recursive(
        simple.map(lambda s: [s]),
        lambda inner: st.lists(block(inner), min_size=1, max_size=4).map(
            lambda blocks: [line for b in blocks for line in b]
        ),
        max_leaves=12,
    )


HEADER = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
)

PROGRAMS = st.lists(_statements(), min_size=1, max_size=8).map(
    lambda parts: HEADER + "\n".join(line for part in parts for line in part) + "\n"
)
"""JAX-flavoured Python: meshes, specs, device_put, classes, functions, nested expressions."""


def python_programs() -> st.SearchStrategy[str]:
    """Grammar-generated Python (hypothesmith), or the JAX generator if it is not installed."""
    try:
        import hypothesmith
    except ImportError:
        return PROGRAMS
    return hypothesmith.from_grammar().map(lambda code: HEADER + code)
