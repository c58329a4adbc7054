"""`shardls report`: every parameter of a Flax NNX model and the memory it takes per device.

shardls report model.py::Transformer --mesh fsdp=8,tp=4 --optimizer adamw --hbm 16GiB
shardls report --exact my_pkg.model:make_model --mesh fsdp=8 --compare model.py

Static by default (nothing is imported or run). `--exact` imports the named factory and asks JAX
(`nnx.eval_shape` under an AbstractMesh); it is the only command that runs user code. Exit status:
1 when a model exceeds `--hbm` (or `hbm-per-device`) or `--compare` finds a mismatch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.cli.check_files import UnreadableSource, read_source
from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, Subparsers, UsageError, option_type
from shardls.cli.settings_args import add_mesh_arguments
from shardls.config import (
    Config,
    ConfigError,
    SettingsLayer,
    config_for,
    merge_settings,
    parse_bytes,
    workspace_root,
)
from shardls.core import parse_dtype
from shardls.memory.compare import mismatches
from shardls.memory.discover import factory_rules, file_models
from shardls.memory.figures import per_device_bytes
from shardls.memory.model import ModelMemory
from shardls.memory.optimizer import OPTIMIZERS, optimizer_state
from shardls.memory.report import FORMATS, ReportOptions, render

NAME = "report"
COMMAND_LINE = "the command line"


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        NAME,
        help="parameters and bytes per device of whole Flax NNX models",
        description="List every parameter of each nnx.Module in a file with its layout, and total "
        "the memory per device (statically; --exact asks JAX).",
    )
    parser.add_argument("target", nargs="?", metavar="FILE[::Class]", help="the file, optionally one class")
    add_mesh_arguments(parser)
    parser.add_argument(
        "--dtype", type=option_type(parse_dtype), help="param dtype where a layer writes none"
    )
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), help="add the optimizer state per device")
    parser.add_argument(
        "--hbm", type=option_type(parse_bytes), metavar="SIZE", help="device memory, e.g. 16GiB"
    )
    parser.add_argument("--output-format", choices=FORMATS, default="text")
    parser.add_argument(
        "--exact",
        metavar="PACKAGE.MODULE:FACTORY",
        help="import this factory and build the model under nnx.eval_shape (runs your code; needs shardls[exact])",
    )
    parser.add_argument(
        "--rules",
        metavar="NAME",
        help="with --exact: the module attribute holding the logical axis rules (default: those the factory enters, read statically)",
    )
    parser.add_argument(
        "--compare", action="store_true", help="with --exact: list every difference from the static result"
    )


def run(args: argparse.Namespace) -> int:
    if args.target is None and args.exact is None:
        raise UsageError("give a FILE[::Class] to report on, or --exact PACKAGE.MODULE:FACTORY")
    if (args.compare or args.rules) and args.exact is None:
        raise UsageError("--compare and --rules work with --exact only")
    path, only = _target(args.target) if args.target else (None, None)
    config = _config(path or Path.cwd())
    settings = _settings(args, config)
    options = ReportOptions(OPTIMIZERS[args.optimizer] if args.optimizer else None, settings.hbm_per_device)
    exact = _exact(args, settings) if args.exact else None
    static: list[ModelMemory] = []
    if path is not None or (exact is not None and args.compare):
        file = path or Path(exact.path if exact is not None else "")
        static = _static(file, only, settings, workspace_root(file, config))
    status = EXIT_OK
    if exact is not None:
        sys.stdout.write(render([exact], options, args.output_format))
        if args.compare:
            # Machine-readable output stays parseable: the comparison then goes to stderr.
            stream = sys.stdout if args.output_format in ("text", "markdown") else sys.stderr
            status = _compare(exact, static, stream)
    else:
        if not static:
            print(
                f"shardls report: no nnx.Module in {path}" + (f" named {only}" if only else ""),
                file=sys.stderr,
            )
        sys.stdout.write(render(static, options, args.output_format))
    shown = [exact] if exact is not None else static
    if options.hbm is not None and any(_over(m, options) for m in shown):
        status = EXIT_PROBLEMS
    return status


def _target(text: str) -> tuple[Path, str | None]:
    file, _, cls = text.partition("::")
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"{file}: no such file")
    return path, cls or None


def _config(path: Path) -> Config:
    try:
        return config_for(path)
    except ConfigError as error:
        raise UsageError(str(error)) from None


def _settings(args: argparse.Namespace, config: Config) -> Settings:
    layer = SettingsLayer(
        COMMAND_LINE,
        device_count=args.device_count,
        default_mesh=args.mesh,
        dtype=args.dtype.name if args.dtype is not None else None,
        hbm_per_device=args.hbm,
    )
    return merge_settings(config.layer, layer)


def _static(path: Path, only: str | None, settings: Settings, root: Path) -> list[ModelMemory]:
    """The file's models; the workspace (other files that instantiate them, imports) is
    `workspace_root`'s, as for `shardls check`."""
    try:
        text, _ = read_source(path, roots=[root])
    except UnreadableSource as error:
        raise UsageError(f"{path}: {error}") from None
    workspace = Workspace([root])
    models = file_models(workspace, str(path), text, settings, only).models
    if only is not None and not models:
        raise UsageError(f"{path}: no nnx.Module named {only}")
    return list(models) if only is not None else top_level(models)


def top_level(models: Sequence[ModelMemory]) -> list[ModelMemory]:
    """Without `::Class`: each model the file creates, and each class it never creates (a
    submodule is part of its parent's table; `FILE::Block` shows it alone)."""
    return [m for m in models if m.instantiation or not m.covered]


def _exact(args: argparse.Namespace, settings: Settings) -> ModelMemory:
    from shardls.exact import ExactUnavailable, exact_model

    rules = args.rules if args.rules is not None else _factory_rules(args.exact, settings)
    print(f"shardls report: exact mode imports and runs {args.exact} (under nnx.eval_shape)", file=sys.stderr)
    try:
        return exact_model(args.exact, settings.default_mesh, rules)
    except ExactUnavailable as error:
        raise UsageError(str(error)) from None


def _factory_rules(target: str, settings: Settings) -> tuple[tuple[str, object], ...] | None:
    """Without `--rules`: the logical axis rules the factory creates its model under, read
    statically from its source (before anything is imported), and said on stderr."""
    module_name, _, factory = target.partition(":")
    path = _module_file(module_name, Path.cwd())
    if path is None or not factory:
        return None
    try:
        text, _ = read_source(path, roots=[Path.cwd()])
    except UnreadableSource:
        return None
    found = factory_rules(Workspace([Path.cwd()]), str(path), text, factory, settings)
    if found is None:
        return None
    print(
        f"shardls report: exact mode uses the logical axis rules {factory} creates its model under "
        f"({found.source}, read statically; --rules NAME to choose others)",
        file=sys.stderr,
    )
    return tuple((rule.name, rule.target) for rule in found.rules)


def _module_file(dotted: str, root: Path) -> Path | None:
    """The source of `a.b` under `root` (`a/b.py` or `a/b/__init__.py`), as importing from there finds it."""
    parts = [part for part in dotted.split(".") if part]
    if not parts:
        return None
    base = root.joinpath(*parts)
    return next((c for c in (base.with_suffix(".py"), base / "__init__.py") if c.is_file()), None)


def _compare(exact: ModelMemory, static: list[ModelMemory], stream: TextIO) -> int:
    """Against the static model built in the factory (the first instantiation after its `def`)."""
    candidates = [
        m for m in static if m.class_name == exact.class_name and m.instantiation and m.line >= exact.line
    ]
    chosen = min(candidates, key=lambda m: m.line, default=None)
    if chosen is None:
        print(
            f"compare: no instantiation of {exact.class_name} found statically in {exact.path}", file=stream
        )
        return EXIT_PROBLEMS
    found = mismatches(chosen, exact)
    where = f"{chosen.path}:{chosen.line + 1}"
    if not found:
        print(f"compare: the static result ({where}) equals exact mode's for every parameter", file=stream)
        return EXIT_OK
    print(f"compare: {len(found)} difference(s) from the static result ({where}):", file=stream)
    for line in found:
        print(f"  {line}", file=stream)
    return EXIT_PROBLEMS


def _over(model: ModelMemory, options: ReportOptions) -> bool:
    state = optimizer_state(model, options.optimizer) if options.optimizer else None
    return options.hbm is not None and per_device_bytes(model, state) > options.hbm
