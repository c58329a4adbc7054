"""Quick fixes for the sharding-in-types errors that say where the result should go.

The analysis attaches to each such diagnostic the choices the core's own rule accepts
(`shardls.core.typing.fixes`: `data["out_shardings"]`, `data["reshards"]`), each with the type
the fixed operation then has. This module only writes them into the code, and only where the
text is exactly what the fix expects:

- SH301 (ambiguous contraction): `out_sharding=P(...)` added to the call; `x @ w` becomes
  `jnp.matmul(x, w, out_sharding=P(...))`;
- SH305 (unsupported reshape): `out_sharding=P(...)` added to the `reshape` call;
- SH308 (gather): `x[i]` becomes `x.at[i].get(out_sharding=P(...))`, or `out_sharding=` is added
  to an `x.at[i].get()`;
- SH307 (concatenate/stack of operands sharded differently): the operands that differ, in the
  literal list, wrapped in `jax.reshard(y, P(...))`.

The names written (`P`, `jnp`, `jax`) are the file's own top-level imports of PartitionSpec,
jax.numpy and jax, and only when nothing else in the file binds them; otherwise no fix is
offered. None is certain: each picks one layout among several, so `check --fix` leaves them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shardls.analysis.facts import Span
from shardls.analysis.source import Segment
from shardls.fixes.model import Edit, Fix, FixSource
from shardls.fixes.rewrites import Context

_PARTITION_SPEC = ("jax.P", "jax.sharding.PartitionSpec", "jax.sharding.P", "jax.experimental.PartitionSpec")
_NUMPY = "jax.numpy"
_JAX = "jax"
_QUOTE = '"'


def out_sharding_fixes(context: Context) -> list[Fix]:
    found = _located(context)
    if found is None:
        return []
    node, segment, names = found
    spec_name = names.partition_spec()
    choices = context.diagnostic.data.get("out_shardings")
    if spec_name is None or not isinstance(choices, list):
        return []
    fixes: list[Fix] = []
    for choice in choices:
        spec = _spec_text(spec_name, choice.get("spec") if isinstance(choice, dict) else None)
        if spec is None or not isinstance(choice.get("type"), str):
            continue
        written = _with_out_sharding(context.diagnostic.code, node, segment, names, spec)
        if written is not None:
            title, edit = written
            fixes.append(Fix(f"{title}: {choice['type']}", (edit,)))
    return _preferred_if_alone(fixes)


def reshard_fixes(context: Context) -> list[Fix]:
    found = _located(context)
    if found is None:
        return []
    node, segment, names = found
    spec_name, jax_name = names.partition_spec(), names.get(_JAX)
    choices = context.diagnostic.data.get("reshards")
    items = _literal_operands(node)
    if spec_name is None or jax_name is None or items is None or not isinstance(choices, list):
        return []
    fixes: list[Fix] = []
    for choice in choices:
        spec = _spec_text(spec_name, choice.get("spec") if isinstance(choice, dict) else None)
        moved = choice.get("operands") if isinstance(choice, dict) else None
        if (
            spec is None
            or not isinstance(moved, list)
            or not moved
            or not isinstance(choice.get("type"), str)
        ):
            continue
        if not all(isinstance(i, int) and 0 <= i < len(items) for i in moved):
            continue
        edits = []
        for index in moved:
            text = _source(segment, items[index])
            edits.append(Edit(_span(segment, items[index]), f"{jax_name}.reshard({text}, {spec})"))
        what = ", ".join(_source(segment, items[i]) for i in moved)
        fixes.append(Fix(f"Reshard {what} to {spec}: {choice['type']}", tuple(edits)))
    return _preferred_if_alone(fixes)


def _preferred_if_alone(fixes: list[Fix]) -> list[Fix]:
    if len(fixes) == 1:
        return [Fix(fixes[0].title, fixes[0].edits, preferred=True)]
    return fixes


# -- writing the fixed operation ------------------------------------------------------------------


def _with_out_sharding(
    code: str, node: ast.expr, segment: Segment, names: _Names, spec: str
) -> tuple[str, Edit] | None:
    keyword = f"out_sharding={spec}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and code == "SH301":
        numpy = names.get(_NUMPY)
        if numpy is None:
            return None
        left, right = _source(segment, node.left), _source(segment, node.right)
        text = f"{numpy}.matmul({left}, {right}, {keyword})"
        return f"Write {text}", Edit(_span(segment, node), text)
    if isinstance(node, ast.Subscript) and code == "SH308" and isinstance(node.ctx, ast.Load):
        base = _source(segment, node.value)
        if not isinstance(node.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            base = f"({base})"
        text = f"{base}.at[{_source(segment, node.slice)}].get({keyword})"
        return f"Write {text}", Edit(_span(segment, node), text)
    if isinstance(node, ast.Call) and _takes_out_sharding(code, node):
        return f"Add {keyword}", _keyword_edit(segment, node, keyword)
    return None


def _takes_out_sharding(code: str, call: ast.Call) -> bool:
    """Whether `out_sharding=` can be added to this call as is: it has arguments, none spread,
    no `out_sharding=` yet, and it is the operation the diagnostic is about."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if any(k.arg is None or k.arg == "out_sharding" for k in call.keywords):
        return False
    name = _called_name(call.func)
    if code == "SH301":
        return bool(call.args) and name in ("matmul", "dot", "einsum", "dot_general")
    if code == "SH305":
        return bool(call.args) and name == "reshape"
    if code == "SH308":
        func = call.func
        return (
            name == "get"
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Subscript)
            and _called_name(func.value.value) == "at"
        )
    return False


def _keyword_edit(segment: Segment, call: ast.Call, keyword: str) -> Edit:
    """`, out_sharding=...` right after the call's last argument (inside the parentheses of a
    call without any)."""
    ends = [_span(segment, n) for n in (*call.args, *call.keywords)]
    if not ends:
        whole = _span(segment, call)
        at = Span(whole.end_line, whole.end_column - 1, whole.end_line, whole.end_column - 1)
        return Edit(at, keyword)
    end = max(ends, key=lambda s: (s.end_line, s.end_column))
    at = Span(end.end_line, end.end_column, end.end_line, end.end_column)
    return Edit(at, f", {keyword}")


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _literal_operands(node: ast.expr) -> list[ast.expr] | None:
    """The operands of `jnp.concatenate([x, y], ...)` written as a literal list or tuple."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    first = node.args[0]
    if not isinstance(first, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in first.elts):
        return None
    return list(first.elts)


def _spec_text(name: str, entries: object) -> str | None:
    """`P("X", None, ("X", "Y"))` from a spec's JSON entries; None when an axis name cannot be
    written as a plain string literal."""
    if not isinstance(entries, list):
        return None
    parts: list[str] = []
    for entry in entries:
        if entry is None:
            parts.append("None")
        elif isinstance(entry, str) and _plain(entry):
            parts.append(_QUOTE + entry + _QUOTE)
        elif isinstance(entry, list) and entry and all(isinstance(a, str) and _plain(a) for a in entry):
            parts.append("(" + ", ".join(_QUOTE + a + _QUOTE for a in entry) + ")")
        else:
            return None
    return f"{name}({', '.join(parts)})"


def _plain(axis: str) -> bool:
    return axis.isprintable() and _QUOTE not in axis and "\\" not in axis


# -- where the diagnostic is, in the text -----------------------------------------------------------


def _located(context: Context) -> tuple[ast.expr, Segment, _Names] | None:
    """The expression the diagnostic spans, its segment, and the file's names; None when the
    file has a part that does not parse (a name bound there would go unseen)."""
    source = context.source
    parsed = source.parsed
    if any(segment.error is not None for segment in parsed.segments):
        return None
    span = context.diagnostic.span
    for segment in parsed.segments:
        if segment.first_line <= span.line < segment.first_line + segment.line_count:
            node = next((n for n in _expressions(segment) if _span(segment, n) == span), None)
            return (node, segment, _Names.of(source)) if node is not None else None
    return None


def _expressions(segment: Segment) -> Iterator[ast.expr]:
    for statement in segment.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.expr):
                yield node


def _span(segment: Segment, node: ast.AST) -> Span:
    """The node's span in the file, columns as string indices (ast counts UTF-8 bytes)."""
    lines = segment.lines
    start, end = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or 1
    return Span(
        segment.abs_line(start),
        _column(lines[start - 1], getattr(node, "col_offset", 0)),
        segment.abs_line(end),
        _column(lines[end - 1], getattr(node, "end_col_offset", None) or 0),
    )


def _column(line: str, byte_offset: int) -> int:
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))


def _source(segment: Segment, node: ast.AST) -> str:
    return ast.get_source_segment(segment.text, node) or ast.unparse(node)


# -- the names a fix may write ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Names:
    """What the file's top-level imports bind: local name for each module or object a fix
    writes, when nothing else in the file binds that name."""

    imported: dict[str, str]

    @classmethod
    def of(cls, source: FixSource) -> _Names:
        imported: dict[str, str] = {}
        meanings: dict[str, set[str]] = {}
        """What each name is bound to: a module or object it imports, or a value (each binding
        that is not an import counts as its own meaning)."""
        for segment in source.parsed.segments:
            for statement in segment.body:
                for name, import_of in _bindings(statement):
                    meaning = (
                        import_of
                        if import_of is not None
                        else f"<binding {sum(map(len, meanings.values()))}>"
                    )
                    meanings.setdefault(name, set()).add(meaning)
                    if import_of is not None and isinstance(statement, (ast.Import, ast.ImportFrom)):
                        imported.setdefault(import_of, name)
        return cls({q: n for q, n in imported.items() if meanings.get(n) == {q}})

    def get(self, qualname: str) -> str | None:
        found = self.imported.get(qualname)
        if found is not None:
            return found
        parent, _, attr = qualname.rpartition(".")
        outer = self.get(parent) if parent else None
        return f"{outer}.{attr}" if outer is not None else None

    def partition_spec(self) -> str | None:
        direct = (self.imported.get(q) for q in _PARTITION_SPEC)
        derived = (self.get(q) for q in _PARTITION_SPEC)
        return next((n for n in (*direct, *derived) if n is not None), None)


def _bindings(statement: ast.stmt) -> Iterator[tuple[str, str | None]]:
    """Every name the statement binds anywhere in it, with what an import binds it to."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname is not None:
                yield alias.asname, alias.name
            else:
                root = alias.name.split(".")[0]
                yield root, root
        return
    if isinstance(statement, ast.ImportFrom):
        module = "." * statement.level + (statement.module or "")
        for alias in statement.names:
            yield alias.asname or alias.name, f"{module}.{alias.name}" if statement.level == 0 else None
        return
    for node in ast.walk(statement):
        for name in _bound_by(node):
            yield name, None


def _bound_by(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name


TYPE_FIXES: dict[str, Callable[[Context], list[Fix]]] = {
    "SH301": out_sharding_fixes,
    "SH305": out_sharding_fixes,
    "SH308": out_sharding_fixes,
    "SH307": reshard_fixes,
}
