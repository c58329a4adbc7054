"""`shardls report` on a 70B-class model (80 layers): the static report against exact mode.

    .venv/bin/python benchmarks/bench_report.py               # 5 static runs, 1 exact run
    .venv/bin/python benchmarks/bench_report.py --repeat 10 --mesh fsdp=16,tp=8

Static: a fresh Workspace and analysis each run (as `shardls report FILE` pays it), from reading
the model file to the rendered table. Exact: importing the model module under JAX, building the
model with `nnx.eval_shape` under an AbstractMesh and reading every parameter's sharding (the
JAX import itself is timed separately). Both totals are printed and must be equal.

Target: the static report ≤ 200 ms (best run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shardls.analysis.settings import Settings  # noqa: E402
from shardls.analysis.workspace import Workspace  # noqa: E402
from shardls.memory.discover import file_models  # noqa: E402
from shardls.memory.model import ModelMemory  # noqa: E402
from shardls.memory.report import ReportOptions, render  # noqa: E402
from shardls.meshtext import parse_mesh_text  # noqa: E402

MODEL_FILE = ROOT / "tests" / "memory" / "models" / "llama.py"
FACTORY = "tests.memory.models.llama:make_70b"
TARGET_MS = 200.0


def static_report(mesh: str) -> tuple[float, ModelMemory]:
    start = time.perf_counter()
    settings = Settings(default_mesh=parse_mesh_text(mesh))
    models = file_models(Workspace([MODEL_FILE.parent]), str(MODEL_FILE), MODEL_FILE.read_text(), settings)
    chosen = [m for m in models.models if m.instantiation][1]  # make_70b
    render([chosen], ReportOptions(), "text")
    return (time.perf_counter() - start) * 1000, chosen


def exact_report(mesh: str) -> tuple[float, float, ModelMemory]:
    start = time.perf_counter()
    import jax  # noqa: F401
    from flax import nnx  # noqa: F401

    imported = time.perf_counter()
    from shardls.exact import exact_model

    model = exact_model(FACTORY, parse_mesh_text(mesh), "RULES", ROOT)
    render([model], ReportOptions(), "text")
    return (imported - start) * 1000, (time.perf_counter() - imported) * 1000, model


def totals(model: ModelMemory) -> tuple[int, int, int]:
    return model.param_count, model.total_bytes, model.max_bytes_per_device


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mesh", default="fsdp=8,tp=4")
    args = parser.parse_args()

    times = []
    for _ in range(args.repeat):
        elapsed, static = static_report(args.mesh)
        times.append(elapsed)
    print(f"model       {MODEL_FILE.relative_to(ROOT)} make_70b, mesh {args.mesh}")
    print(f"static      best {min(times):8.1f} ms   first {times[0]:8.1f} ms   ({args.repeat} runs)")
    jax_import, exact_ms, exact = exact_report(args.mesh)
    print(f"exact       {exact_ms:8.1f} ms   (+ {jax_import:.0f} ms importing jax and flax)")
    print(f"ratio       exact / static best = {exact_ms / min(times):.0f}x")
    print(
        f"static      params {totals(static)[0]:,}  bytes {totals(static)[1]:,}  fullest device {totals(static)[2]:,}"
    )
    print(
        f"exact       params {totals(exact)[0]:,}  bytes {totals(exact)[1]:,}  fullest device {totals(exact)[2]:,}"
    )
    ok = totals(static) == totals(exact) and min(times) <= TARGET_MS
    print(f"target      static ≤ {TARGET_MS:.0f} ms and equal totals: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
