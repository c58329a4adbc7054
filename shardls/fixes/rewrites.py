"""Fixes that rewrite the code a diagnostic is about, from the numbers and names in its `data`.

A fix is only offered when the text at the diagnostic is exactly what the fix expects (a plain
string literal naming the axis, `P(None)`, the `sharding=` keyword of the call), so it never
rewrites code it has not understood. Titles that change a spec say what one device then holds,
computed by the same calculator as the analysis.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Diagnostic, Site, Span
from shardls.core import PartitionSpec, compute_layout
from shardls.core.spec import SpecEntry
from shardls.fixes.literals import plain_axes, plain_string, top_level_statements, writable_in
from shardls.fixes.model import Edit, Fix, FixSource
from shardls.render.inlay import block_text


@dataclass(frozen=True)
class Context:
    diagnostic: Diagnostic
    source: FixSource
    site: Site | None
    """The site the diagnostic is about, for the layout after the fix."""

    @property
    def text(self) -> str | None:
        return self.source.text_of(self.diagnostic.span)


def _unknown_axis(context: Context) -> list[Fix]:
    axis, suggestion = context.diagnostic.data.get("axis"), context.diagnostic.data.get("suggestion")
    literal = plain_string(context.text or "")
    if (
        not isinstance(axis, str)
        or not isinstance(suggestion, str)
        or literal is None
        or literal.body != axis
        or not writable_in(literal, suggestion)
    ):
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
    written = f"{literal.prefix}{literal.quote}{suggestion}{literal.quote}"
    return [Fix(title, (Edit(context.diagnostic.span, written),), preferred=True)]


def _indivisible(context: Context) -> list[Fix]:
    data = context.diagnostic.data
    dim, axes, alternatives = data.get("dim"), data.get("axes"), data.get("alternatives")
    entry = plain_axes(context.text or "")
    if not isinstance(dim, int) or not isinstance(axes, list) or entry is None or entry[0] != tuple(axes):
        return []
    quote = entry[1]
    found = []
    for choice in [*(alternatives if isinstance(alternatives, list) else []), None]:
        normalized = _normalized(choice)
        if normalized is not None and not all(
            isinstance(axis, str) and axis.isprintable() and quote not in axis and "\\" not in axis
            for axis in ((normalized,) if isinstance(normalized, str) else normalized)
        ):
            continue
        written = "None" if normalized is None else _entry_source(normalized, quote)
        how = (
            f"Leave dimension {dim} unsharded (None)"
            if normalized is None
            else f"Shard dimension {dim} over {written}"
        )
        spec = _with_entry(context.site.spec, dim, normalized) if context.site and context.site.spec else None
        found.append(Fix(how + _outcome(context.site, spec), (Edit(context.diagnostic.span, written),)))
    return found


def _scalar(context: Context) -> list[Fix]:
    call = _expression(context.text or "")
    if (
        not isinstance(call, ast.Call)
        or call.keywords
        or len(call.args) != 1
        or not isinstance(call.args[0], ast.Constant)
        or call.args[0].value is not None
        or not _dotted(call.func)
    ):
        return []
    name = ast.unparse(call.func)
    title = f"Write {name}() for a scalar{_outcome(context.site, PartitionSpec(()))}"
    return [Fix(title, (Edit(context.diagnostic.span, f"{name}()"),), preferred=True, certain=True)]


def _legacy_mesh_context(context: Context) -> list[Fix]:
    """`with mesh:` becomes `with jax.set_mesh(mesh):`. Not certain: `jax.set_mesh` also serves
    device_put, jit and Flax, so code under it may then behave differently (as it should)."""
    mesh = context.text
    span = context.diagnostic.span
    if not mesh or not _dotted(_expression(mesh)) or span.line >= len(context.source.lines):
        return []
    after = context.source.lines[span.line][span.end_column :].lstrip()
    if after.startswith("as") and (len(after) == 2 or not (after[2].isalnum() or after[2] == "_")):
        return []  # `with mesh as m:` would bind what set_mesh returns instead
    imported = _jax_import(context.source, span.line)
    if imported is None:
        return []
    alias, import_edit = imported
    edits = (Edit(span, f"{alias}.set_mesh({mesh})"), *import_edit)
    return [Fix(f"Use `with {alias}.set_mesh({mesh}):`", edits, preferred=True)]


_PARAM_KEYWORDS = ("sharding_names", "sharding")


def _param_keyword(context: Context) -> list[Fix]:
    """The deprecated keyword the diagnostic points at (or the one of the call it covers),
    renamed `out_sharding` (the same argument under Flax's new name), unless the call already
    has another of them."""
    span = context.diagnostic.span
    keywords = _call_keywords(context.source, span)
    if keywords is None:
        return []
    named = [(name, at) for name, at in keywords if name in (*_PARAM_KEYWORDS, "out_sharding")]
    if len(named) != 1 or named[0][0] == "out_sharding":
        return []
    name, (line, column) = named[0]
    keyword = Span(line, column, line, column + len(name))
    title = f"Use out_sharding= instead of {name}="
    return [Fix(title, (Edit(keyword, "out_sharding"),), preferred=True, certain=True)]


def _call_keywords(source: FixSource, span: Span) -> list[tuple[str, tuple[int, int]]] | None:
    """The `name=` keyword arguments of the innermost call around the start of `span` (or of
    the call `span` starts with), at 0-based (line, column) of the file."""
    segment = next(
        (s for s in source.parsed.segments if s.first_line <= span.line < s.first_line + len(s.lines)), None
    )
    if segment is None:
        return None
    try:
        found = [
            t
            for t in tokenize.generate_tokens(io.StringIO(segment.text).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE)
        ]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    start = (span.line - segment.first_line + 1, span.column)
    opened: list[int] = []
    call: int | None = None
    for index, token in enumerate(found):
        if token.start >= start and call is None and token.type == tokenize.OP and token.string == "(":
            call = index  # the span starts a call: its own parenthesis
            break
        if token.start >= start:
            call = opened[-1] if opened else None
            break
        if token.type == tokenize.OP and token.string in "([{":
            opened.append(index)
        elif token.type == tokenize.OP and token.string in ")]}" and opened:
            opened.pop()
    if call is None or found[call].string != "(":
        return None
    keywords: list[tuple[str, tuple[int, int]]] = []
    depth = 0
    for index in range(call, len(found)):
        token = found[index]
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
            if depth == 0:
                return keywords
        elif (
            depth == 1
            and token.type == tokenize.NAME
            and found[index - 1].string in ("(", ",")
            and index + 1 < len(found)
            and found[index + 1].string == "="
        ):
            keywords.append((token.string, (segment.first_line + token.start[0] - 1, token.start[1])))
    return None


def _expression(text: str) -> ast.expr | None:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _dotted(node: ast.expr | None) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _jax_import(source: FixSource, before: int) -> tuple[str, tuple[Edit, ...]] | None:
    """The name `jax` is bound to by a top-level import above line `before`, or `jax` and the edit
    that imports it: after the module docstring, `from __future__` imports and leading
    comments, at the first other statement. None when the top of the file cannot be read."""
    insert_at: int | None = None
    header_end = -1
    docstring_allowed = True
    for statement in top_level_statements(source.text):
        if statement.line >= before:
            break
        tree = statement.tree
        if isinstance(tree, ast.Import):
            for alias in tree.names:
                if alias.name == "jax" or alias.name.startswith("jax.") and alias.asname is None:
                    return alias.asname or "jax", ()
        is_header = (docstring_allowed and statement.docstring_candidate) or (
            isinstance(tree, ast.ImportFrom) and tree.module == "__future__"
        )
        docstring_allowed = False
        if is_header:
            header_end = statement.end_line
        elif insert_at is None:
            insert_at = statement.line
    if insert_at is None:
        insert_at = header_end + 1
        if insert_at > before:
            return None
    newline = source.newline
    if insert_at < len(source.lines):
        return "jax", (Edit(Span(insert_at, 0, insert_at, 0), f"import jax{newline}"),)
    last = len(source.lines) - 1
    end = len(source.lines[last])
    return "jax", (Edit(Span(last, end, last, end), f"{newline}import jax"),)


FIXES: dict[str, Callable[[Context], list[Fix]]] = {
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


def _normalized(choice: object) -> str | tuple[str, ...] | None:
    """An alternative from the data (a list of axis names) as a spec entry."""
    if not isinstance(choice, (list, tuple)) or not choice:
        return None
    axes = tuple(str(axis) for axis in choice)
    return axes[0] if len(axes) == 1 else axes


def _entry_source(entry: str | Sequence[str], quote: str) -> str:
    if isinstance(entry, str):
        return f"{quote}{entry}{quote}"
    return "(" + ", ".join(f"{quote}{axis}{quote}" for axis in entry) + ")"
