"""`shardls layout`: how one array is laid out on one mesh, without JAX or devices.

shardls layout --mesh data=2,model=4 --shape 8,12 --spec "P(None, 'model')"
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, Subparsers, UsageError, option_type
from shardls.cli.layout_json import LayoutRequest, layout_json
from shardls.cli.parse import parse_device_count, parse_shape
from shardls.cli.spec_parse import parse_spec
from shardls.core.context import UsageContext
from shardls.core.dtypes import FLOAT32, parse_dtype
from shardls.core.layout import Layout, compute_layout
from shardls.core.mesh import FILL, Mesh, resolve_mesh
from shardls.core.problems import Problem
from shardls.meshtext import parse_axis_types, parse_mesh_text, with_axis_types
from shardls.render.layout_text import layout_text, problems_text, spec_text
from shardls.render.visible import visible

NAME = "layout"

DEFAULT_WIDTH = 100
"""Device grids wrap to this many columns when stdout is not a terminal (so output is stable)."""


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        NAME,
        help="show how an array is laid out across a device mesh",
        description="Lay out an array on a mesh by a PartitionSpec as JAX would; report what JAX rejects.",
    )
    parser.add_argument(
        "--mesh",
        required=True,
        type=option_type(parse_mesh_text),
        metavar="NAME=SIZE,...",
        help="mesh axes in order, e.g. data=2,model=4 or data=2:explicit,model=4; "
        "one size may be -1 (filled from --devices)",
    )
    parser.add_argument(
        "--shape",
        required=True,
        type=option_type(parse_shape),
        help="global array shape, e.g. 8,16 or '(8, 16)'; '' or '()' for a scalar",
    )
    parser.add_argument(
        "--spec",
        required=True,
        type=option_type(parse_spec),
        help="PartitionSpec: None,model or data,(fsdp,tp) or \"P(None, 'model')\"",
    )
    parser.add_argument(
        "--dtype",
        type=option_type(parse_dtype),
        default=FLOAT32,
        help="element type, e.g. bfloat16 or jnp.int8 (default float32)",
    )
    parser.add_argument(
        "--axis-types",
        type=option_type(parse_axis_types),
        metavar="TYPE[,TYPE...]",
        help="auto, explicit or manual, for all axes or one per axis; overrides types written in "
        "--mesh (default auto)",
    )
    parser.add_argument(
        "--context",
        choices=[context.value for context in UsageContext],
        default=UsageContext.DEVICE_PUT.value,
        help="where the sharding is used; JAX checks each place differently (default device_put)",
    )
    parser.add_argument(
        "--devices",
        type=option_type(parse_device_count),
        metavar="N",
        help="devices available: fills a -1 mesh size and checks the mesh fits",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable interface)")


def run(args: argparse.Namespace) -> int:
    written: Mesh = args.mesh
    if written.axis_sizes.count(FILL) == 1 and args.devices is None:
        raise UsageError("the mesh has a -1 size; say how many devices fill it with --devices N")
    if args.axis_types is not None:
        try:
            written = with_axis_types(written, args.axis_types)
        except ValueError as error:
            raise UsageError(f"--axis-types gives {error}") from None
    mesh, mesh_problems = resolve_mesh(written, args.devices)
    request = LayoutRequest(mesh, args.spec, args.shape, args.dtype, UsageContext(args.context))
    layout = (
        compute_layout(mesh, request.spec, request.global_shape, request.dtype, request.context)
        if _can_lay_out(mesh)
        else None
    )
    problems = [*mesh_problems, *(layout.problems if layout else ())]
    if args.json:
        print(json.dumps(layout_json(request, layout, problems), indent=2))
    else:
        print(visible(_text(request, layout, mesh_problems)), end="")
    return EXIT_PROBLEMS if any(problem.is_error for problem in problems) else EXIT_OK


def _can_lay_out(mesh: Mesh) -> bool:
    """Every size known and at least 1, and no name twice; otherwise only the mesh problems make sense."""
    return mesh.is_resolved and len(mesh.sizes_by_name) == len(mesh.axis_names)


def _text(request: LayoutRequest, layout: Layout | None, mesh_problems: list[Problem]) -> str:
    if layout is not None:
        width = (
            shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns if sys.stdout.isatty() else DEFAULT_WIDTH
        )
        return layout_text(layout, mesh_problems, width)
    return (
        f"mesh        {request.mesh.describe()}\n"
        f"spec        {spec_text(request.spec)}\n\n"
        "no layout: the mesh has to be fixed first\n\n"
        f"{problems_text(mesh_problems)}\n"
    )
