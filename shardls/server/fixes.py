"""Quick fixes: edits that resolve a diagnostic, from the numbers and names in its `data`.

A fix is only offered when the text at the diagnostic is what the fix expects (the literal spec
entry the data names, `P(None)`, the `sharding=` keyword), so it never rewrites code it has not
understood. Titles that change a spec say what one device then holds, computed by the same
calculator as the analysis. Every diagnostic can also be silenced on its line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Diagnostic, Site, Span
from shardls.core import PartitionSpec, compute_layout
from shardls.core.spec import SpecEntry
from shardls.render.inlay import block_text


@dataclass(frozen=True)
class Edit:
    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    preferred: bool = False


@dataclass(frozen=True)
class _Context:
    diagnostic: Diagnostic
    lines: Sequence[str]
    site: Site | None
    """The site the diagnostic is about, for the layout after the fix."""

    @property
    def text(self) -> str | None:
        """The text the diagnostic covers, when it is on one line."""
        span = self.diagnostic.span
        if span.line != span.end_line or span.line >= len(self.lines):
            return None
        return self.lines[span.line][span.column : span.end_column]


def fixes(diagnostic: Diagnostic, lines: Sequence[str], site: Site | None) -> list[Fix]:
    """The fixes for a diagnostic of a file (given by lines); the last one silences it."""
    context = _Context(diagnostic, lines, site)
    make = _FIXES.get(diagnostic.code)
    return [*(make(context) if make else []), *_ignore(context)]


def _unknown_axis(context: _Context) -> list[Fix]:
    axis, suggestion = context.diagnostic.data.get("axis"), context.diagnostic.data.get("suggestion")
    text = context.text
    if not isinstance(axis, str) or not isinstance(suggestion, str) or text is None or _string(text) != axis:
        return []
    spec = context.site.spec if context.site is not None else None
    renamed = (
        None
        if spec is None
        else PartitionSpec(
            tuple(_renamed(entry, axis, suggestion) for entry in spec.entries), spec.unreduced, spec.reduced
        )
    )
    title = f"Replace {axis!r} with {suggestion!r}{_outcome(context.site, renamed)}"
    return [Fix(title, (Edit(context.diagnostic.span, text[0] + suggestion + text[0]),), preferred=True)]


def _indivisible(context: _Context) -> list[Fix]:
    data = context.diagnostic.data
    dim, axes, alternatives = data.get("dim"), data.get("axes"), data.get("alternatives")
    text = context.text
    if not isinstance(dim, int) or not isinstance(axes, list) or text is None or _entry(text) != tuple(axes):
        return []
    quote = next((char for char in text if char in "\"'"), '"')
    found = []
    for choice in [*(alternatives if isinstance(alternatives, list) else []), None]:
        entry = _normalized(choice)
        written = "None" if entry is None else _entry_source(entry, quote)
        how = (
            f"Leave dimension {dim} unsharded (None)"
            if entry is None
            else f"Shard dimension {dim} over {written}"
        )
        spec = _with_entry(context.site.spec, dim, entry) if context.site and context.site.spec else None
        found.append(Fix(how + _outcome(context.site, spec), (Edit(context.diagnostic.span, written),)))
    return found


def _scalar(context: _Context) -> list[Fix]:
    match = re.fullmatch(r"([\w.]+)\(\s*None\s*,?\s*\)", context.text or "")
    if match is None:
        return []
    empty = PartitionSpec(())
    title = f"Write {match.group(1)}() for a scalar{_outcome(context.site, empty)}"
    return [Fix(title, (Edit(context.diagnostic.span, f"{match.group(1)}()"),), preferred=True)]


def _legacy_mesh_context(context: _Context) -> list[Fix]:
    mesh = context.text
    if not mesh or not re.fullmatch(r"[\w.]+", mesh):
        return []
    alias, import_edit = _jax_import(context.lines)
    edits = (Edit(context.diagnostic.span, f"{alias}.set_mesh({mesh})"), *import_edit)
    return [Fix(f"Use `with {alias}.set_mesh({mesh}):`", edits, preferred=True)]


def _param_keyword(context: _Context) -> list[Fix]:
    """The deprecated keyword written in (or starting) the diagnostic's span, renamed."""
    span = context.diagnostic.span
    for line in range(span.line, min(span.end_line, len(context.lines) - 1) + 1):
        text = context.lines[line]
        start = span.column if line == span.line else 0
        end = span.end_column if line == span.end_line else len(text)
        match = _PARAM_KEYWORD.search(text, start)
        if match is not None and match.start(1) < end:
            keyword = Span(line, match.start(1), line, match.end(1))
            title = f"Use out_sharding= instead of {match.group(1)}="
            return [Fix(title, (Edit(keyword, "out_sharding"),), preferred=True)]
    return []


_PARAM_KEYWORD = re.compile(r"\b(sharding_names|sharding)\s*=")


def _ignore(context: _Context) -> list[Fix]:
    code, line = context.diagnostic.code, context.diagnostic.span.line
    text = context.lines[line] if line < len(context.lines) else ""
    title = f"Ignore {code} on this line"
    existing = re.search(r"#\s*shardls:\s*ignore\[([^\]]*)\]", text)
    if existing is not None:
        at = existing.end(1)
        separator = ", " if existing.group(1).strip() else ""
        return [Fix(title, (Edit(Span(line, at, line, at), f"{separator}{code}"),))]
    if re.search(r"#\s*shardls:\s*ignore\s*$", text):
        return []
    end = len(text)
    return [Fix(title, (Edit(Span(line, end, line, end), f"  # shardls: ignore[{code}]"),))]


_FIXES: dict[str, Callable[[_Context], list[Fix]]] = {
    "SH001": _indivisible,
    "SH003": _scalar,
    "SH005": _unknown_axis,
    "SH203": _legacy_mesh_context,
    "SH204": _param_keyword,
}


# -- what the fixed code will be ------------------------------------------------------------


def _outcome(site: Site | None, spec: PartitionSpec | None) -> str:
    """` → per device [4, 16] ×2` for the site laid out by `spec`, or why JAX still rejects it."""
    if spec is None or site is None or site.layout is None or site.logical_spec is not None:
        return ""
    shape = tuple(dim for dim in site.shape or () if isinstance(dim, int))
    if site.shape is None or len(shape) != len(site.shape):
        return ""
    layout = compute_layout(site.layout.mesh, spec, shape, site.layout.dtype, site.context)
    if layout.shard_shape is None:
        codes = sorted({problem.code for problem in layout.problems if problem.is_error})
        return f" (JAX still rejects it: {', '.join(codes)})"
    return f" → per device {block_text(layout.shard_shape, layout.copies)}"


def _renamed(entry: SpecEntry, old: str, new: str) -> SpecEntry:
    if isinstance(entry, tuple):
        return tuple(new if axis == old else axis for axis in entry)
    return new if entry == old else entry


def _with_entry(spec: PartitionSpec, dim: int, entry: SpecEntry) -> PartitionSpec:
    entries = list(spec.padded(max(len(spec), dim + 1)))
    entries[dim] = entry
    return PartitionSpec(tuple(entries), spec.unreduced, spec.reduced)


def _string(text: str) -> str | None:
    value = _literal(text)
    return value if isinstance(value, str) else None


def _entry(text: str) -> tuple[str, ...] | None:
    """The axes a spec entry written as `"model"` or `("data", "model")` names."""
    value = _literal(text)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _normalized(choice: object) -> str | tuple[str, ...] | None:
    """An alternative from the data (a list of axis names) as a spec entry."""
    if not isinstance(choice, (list, tuple)) or not choice:
        return None
    axes = tuple(str(axis) for axis in choice)
    return axes[0] if len(axes) == 1 else axes


def _entry_source(entry: str | tuple[str, ...], quote: str) -> str:
    if isinstance(entry, str):
        return f"{quote}{entry}{quote}"
    return "(" + ", ".join(f"{quote}{axis}{quote}" for axis in entry) + ")"


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _jax_import(lines: Sequence[str]) -> tuple[str, tuple[Edit, ...]]:
    """The name `jax` is imported as, or `jax` and the edit that imports it."""
    for line in lines:
        match = re.fullmatch(r"import jax(?:\s+as\s+(\w+))?\s*(?:#.*)?", line.strip())
        if match is not None and not line[:1].isspace():
            return match.group(1) or "jax", ()
    first_import = next(
        (
            n
            for n, line in enumerate(lines)
            if re.match(r"(import|from)\s", line) and "__future__" not in line
        ),
        None,
    )
    futures = [n for n, line in enumerate(lines) if line.startswith("from __future__")]
    at = first_import if first_import is not None else (futures[-1] + 1 if futures else 0)
    return "jax", (Edit(Span(at, 0, at, 0), "import jax\n"),)
