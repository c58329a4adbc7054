"""Comments that steer the analysis: device count, mesh, suppression; and hints real code already
carries about its device count (`XLA_FLAGS=--xla_force_host_platform_device_count=8`)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field

from shardls.analysis.source import ParsedSource
from shardls.core import Mesh
from shardls.meshtext import parse_mesh_text

_PRAGMA = re.compile(r"#\s*shardls:\s*(?P<body>.*)$")
_IGNORE = re.compile(r"ignore(?:\[(?P<codes>[^\]]*)\])?\s*$")
_XLA_HINT = re.compile(r"xla_force_host_platform_device_count\s*=\s*(\d+)")
_CPU_DEVICES_HINT = re.compile(r"""jax_num_cpu_devices['"]\s*,\s*(\d+)""")

ALL_CODES = frozenset({"*"})


@dataclass(frozen=True)
class Pragmas:
    device_count: tuple[int, int] | None = None
    """(count, 0-based line) from `# shardls: device-count=N`."""
    device_hint: tuple[int, int, str] | None = None
    """(count, line, what) from XLA_FLAGS or jax_num_cpu_devices in the code."""
    mesh: tuple[Mesh, int] | None = None
    ignore_file: bool = False
    ignored: dict[int, frozenset[str]] = field(default_factory=dict)
    """0-based line -> codes ignored there (`ALL_CODES` for a bare `ignore`)."""
    errors: tuple[tuple[int, str], ...] = ()

    def suppressed(self, line: int, code: str) -> bool:
        codes = self.ignored.get(line)
        return codes is not None and (codes is ALL_CODES or "*" in codes or code in codes)


def read_pragmas(source: ParsedSource) -> Pragmas:
    lines = source.lines
    device_count = None
    device_hint = None
    mesh = None
    ignore_file = False
    ignored: dict[int, frozenset[str]] = {}
    errors: list[tuple[int, str]] = []
    for number, line in enumerate(lines):
        if device_hint is None and "device" in line:
            match = _XLA_HINT.search(line) or _CPU_DEVICES_HINT.search(line)
            if match:
                what = "XLA_FLAGS hint" if "xla_force" in match.group(0) else "jax_num_cpu_devices hint"
                device_hint = (int(match.group(1)), number, what)
        if "shardls" not in line:
            continue
        pragma = _PRAGMA.search(line)
        if pragma is None or not _is_comment(source, number, pragma.start()):
            continue
        body = pragma.group("body").strip()
        if body == "ignore-file":
            ignore_file = True
        elif body.startswith("ignore"):
            match = _IGNORE.match(body)
            if match is None:
                errors.append((number, f"cannot read the pragma {body!r}"))
                continue
            codes = match.group("codes")
            ignored[number] = (
                ALL_CODES if codes is None else frozenset(c.strip() for c in codes.split(",") if c.strip())
            )
        elif body.startswith("device-count"):
            value = body.partition("=")[2].strip()
            if value.isdigit() and int(value) > 0:
                device_count = (int(value), number)
            else:
                errors.append((number, f"device-count needs a positive integer, got {value!r}"))
        elif body.startswith("mesh"):
            try:
                mesh = (parse_mesh_text(body[4:].strip(" =")), number)
            except ValueError as error:
                errors.append((number, str(error)))
        else:
            errors.append((number, f"unknown shardls pragma {body!r}"))
    return Pragmas(device_count, device_hint, mesh, ignore_file, ignored, tuple(errors))


def _is_comment(source: ParsedSource, line: int, column: int) -> bool:
    """Whether the `#` at (line, column) starts a real comment, not text inside a string
    (a docstring that mentions `# shardls: ignore-file` must not switch the analysis off)."""
    for segment in source.segments:
        if segment.first_line <= line < segment.first_line + len(segment.lines):
            relative = line - segment.first_line + 1
            for stmt in segment.body:
                if stmt.lineno <= relative <= (stmt.end_lineno or stmt.lineno) and _in_multiline_string(
                    stmt, relative
                ):
                    return False
            break
    text = source.lines[line]
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                return token.start[1] == column
    except (tokenize.TokenError, SyntaxError):
        return False
    return False


def _in_multiline_string(stmt: ast.stmt, line: int) -> bool:
    return any(
        isinstance(node, (ast.Constant, ast.JoinedStr))
        and node.lineno < line <= (node.end_lineno or node.lineno)
        or isinstance(node, (ast.Constant, ast.JoinedStr))
        and node.lineno == line < (node.end_lineno or line)
        for node in ast.walk(stmt)
    )
