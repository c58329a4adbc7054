"""Time shardls' layout calculator against JAX's own `shard_shape` on the same random cases.

    .venv/bin/python benchmarks/bench_calculator.py [--cases 10000] [--repeat 5] [--seed 0] [--profile]

Both sides get their inputs built before the clock starts (our Mesh and PartitionSpec; JAX's
AbstractMesh and P, with axis types given explicitly), so only the calculation is timed:
`compute_layout(..., context=UsageContext.SHARD_SHAPE)` against
`NamedSharding(abstract_mesh, p).shard_shape(shape)`, JAX's exceptions caught. The best of
several repetitions is reported. Target: ours at least 20x faster. The script also checks that
both sides agree on every case's shard shape (None where JAX raises) and exits 1 if they do not.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before importing jax: no accelerator probing

from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import AxisType as JaxAxisType
from jax.sharding import PartitionSpec as P

from shardls.core import UNCONSTRAINED, AxisType, Mesh, PartitionSpec, UsageContext, compute_layout
from shardls.core.spec import RawEntry

TARGET_RATIO = 20
AXIS_SIZES = (1, 2, 3, 4, 6, 8, 16)
AXIS_NAMES = ("data", "model", "fsdp", "tp")
UNKNOWN_AXIS = "foo"


@dataclass(frozen=True)
class Case:
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    types: tuple[AxisType, ...]
    entries: tuple[RawEntry, ...]
    shape: tuple[int, ...]


def random_case(rng: random.Random) -> Case:
    """A mesh of 1-4 axes and a spec of None / one axis / a tuple of axes, on a mostly divisible shape.

    A few cases are meant to fail (an unknown axis, an axis used twice, UNCONSTRAINED, a spec
    longer than the rank, an indivisible dimension) so that both sides' error paths are timed.
    """
    names = tuple(rng.sample(AXIS_NAMES, rng.randint(1, 4)))
    sizes = tuple(rng.choice(AXIS_SIZES) for _ in names)
    types = tuple(rng.choice((AxisType.AUTO, AxisType.EXPLICIT)) for _ in names)
    rank = rng.randint(0, 4)
    free = list(names)
    rng.shuffle(free)
    entries: list[RawEntry] = []
    length = rank + 1 if rng.random() < 0.05 else rng.randint(0, rank)
    for _ in range(length):
        roll = rng.random()
        if roll < 0.3 or not free:
            entries.append(None)
        elif roll < 0.33:
            entries.append(UNCONSTRAINED)
        elif roll < 0.36:
            entries.append(rng.choice((UNKNOWN_AXIS, *names)))  # unknown, or maybe used twice
        elif roll < 0.7 or len(free) < 2:
            entries.append(free.pop())
        else:
            entries.append((free.pop(), free.pop()))
    size_of = dict(zip(names, sizes, strict=True))
    shape = []
    for dim in range(rank):
        entry = entries[dim] if dim < len(entries) else None
        axes = entry if isinstance(entry, tuple) else (entry,)
        factor = 1
        for axis in axes:
            factor *= size_of.get(axis, 1) if isinstance(axis, str) else 1
        shape.append(factor * rng.randint(1, 8) if rng.random() < 0.9 else rng.randint(1, 64))
    return Case(names, sizes, types, tuple(entries), tuple(shape))


def jax_entry(entry: RawEntry) -> object:
    return P.UNCONSTRAINED if entry is UNCONSTRAINED else entry


def ours(cases: Sequence[Case]) -> list[tuple[Mesh, PartitionSpec, tuple[int, ...]]]:
    return [(Mesh(c.names, c.sizes, c.types), PartitionSpec.of(*c.entries), c.shape) for c in cases]


def theirs(cases: Sequence[Case]) -> list[tuple[AbstractMesh, P, tuple[int, ...]]]:
    jax_types = {AxisType.AUTO: JaxAxisType.Auto, AxisType.EXPLICIT: JaxAxisType.Explicit}
    return [
        (
            AbstractMesh(c.sizes, c.names, axis_types=tuple(jax_types[t] for t in c.types)),
            P(*map(jax_entry, c.entries)),
            c.shape,
        )
        for c in cases
    ]


def our_shard_shape(mesh: Mesh, spec: PartitionSpec, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    return compute_layout(mesh, spec, shape, context=UsageContext.SHARD_SHAPE).shard_shape


def jax_shard_shape(mesh: AbstractMesh, spec: P, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(NamedSharding(mesh, spec).shard_shape(shape))
    except Exception:  # DuplicateSpecError is not a ValueError; a long spec gives IndexError
        return None


def timings(
    calculate: Callable[..., object], inputs: Sequence[tuple[object, ...]], repeat: int
) -> list[float]:
    """Wall time of each pass over `inputs`, with the garbage collector paused as timeit does.

    The first pass is reported apart: JAX memoizes on equal meshes and specs, so its later
    passes are warm-cache numbers.
    """
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for args in inputs:
            calculate(*args)
        times.append(time.perf_counter() - start)
        gc.enable()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="also profile compute_layout over the cases")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    cases = [random_case(rng) for _ in range(args.cases)]
    our_inputs, jax_inputs = ours(cases), theirs(cases)

    # Timed before anything else calls JAX, so that its first pass is a cold one.
    our_times = timings(our_shard_shape, our_inputs, args.repeat)
    jax_times = timings(jax_shard_shape, jax_inputs, args.repeat)
    disagreements = [
        (case, mine, jax)
        for case, a, b in zip(cases, our_inputs, jax_inputs, strict=True)
        if (mine := our_shard_shape(*a)) != (jax := jax_shard_shape(*b))
    ]
    rejected = sum(our_shard_shape(*a) is None for a in our_inputs)

    def micros(seconds: float) -> str:
        return f"{seconds * 1e6 / len(cases):8.2f} µs"

    print(f"{len(cases):,} cases (seed {args.seed}, {rejected:,} rejected by both), {args.repeat} passes")
    print("                                  first pass   best pass (per call)")
    print(f"  shardls compute_layout          {micros(our_times[0])}  {micros(min(our_times))}")
    print(f"  jax NamedSharding.shard_shape   {micros(jax_times[0])}  {micros(min(jax_times))}")
    first, best = jax_times[0] / our_times[0], min(jax_times) / min(our_times)
    verdict = "meets" if best >= TARGET_RATIO else "BELOW"
    target = f"{verdict} the {TARGET_RATIO}x target"
    print(f"  ratio (jax / shardls)           {first:8.1f}x   {best:8.1f}x     {target}")
    print(f"shard shapes disagree on {len(disagreements):,} of {len(cases):,} cases")
    for case, mine, jax in disagreements[:5]:
        print(f"  {case}: shardls {mine}, jax {jax}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(lambda: [our_shard_shape(*a) for a in our_inputs])
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(15)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
