"""Read a PartitionSpec typed on the command line, in any of the spellings users copy around.

`None,model`, `data,(fsdp,tp)`, `P(None, 'model')`, `jax.sharding.PartitionSpec('a')`,
`(None, ('data', 'model'))`, `P(P.UNCONSTRAINED, 'x')`, `P('x', unreduced={'y'})`.
All of them are Python expressions, so one `ast` walk reads them, and nothing is ever evaluated.
A bare identifier is taken as the axis name it spells (the plain comma form relies on it).
The outermost tuple or call holds the entries: `(data, model)` is `P('data', 'model')`.
"""

from __future__ import annotations

import ast

from shardls.core.spec import UNCONSTRAINED, AxisItem, PartitionSpec, RawEntry

_SPEC_NAMES = frozenset({"P", "PartitionSpec"})
_SET_NAMES = frozenset({"set", "frozenset"})
_SET_KEYWORDS = ("unreduced", "reduced")


def parse_spec(text: str) -> PartitionSpec:
    """The PartitionSpec `text` spells, keeping `text` as its `original`; raises ValueError."""
    source = text.strip()
    if not source:
        return PartitionSpec.of(original=text)
    try:
        node = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError) as error:
        raise ValueError(f"{text!r} is not a PartitionSpec: {getattr(error, 'msg', error)}") from None
    keywords: list[ast.keyword] = []
    if isinstance(node, ast.Call):
        if _last_name(node.func) not in _SPEC_NAMES:
            raise _unsupported(node.func, "expected P(...) or PartitionSpec(...)")
        items, keywords = node.args, node.keywords
    elif isinstance(node, (ast.Tuple, ast.List)):
        items = node.elts
    else:
        items = [node]
    axis_sets = _keyword_sets(keywords)
    return PartitionSpec.of(
        *(_entry(item) for item in items),
        unreduced=axis_sets.get("unreduced", ()),
        reduced=axis_sets.get("reduced", ()),
        original=text,
    )


def _entry(node: ast.expr) -> RawEntry:
    """One positional entry: None, an axis name, UNCONSTRAINED, or a tuple/list of names."""
    if _is_unconstrained(node):
        return UNCONSTRAINED
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_axis(item) for item in node.elts)
    return _axis(node)


def _is_unconstrained(node: ast.expr) -> bool:
    """`P.UNCONSTRAINED`, `jax.sharding.PartitionSpec.UNCONSTRAINED` or a bare `UNCONSTRAINED`."""
    if isinstance(node, ast.Name):
        return node.id == "UNCONSTRAINED"
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "UNCONSTRAINED"
        and _last_name(node.value) in _SPEC_NAMES
    )


def _axis(node: ast.expr) -> AxisItem:
    """A name inside an entry. None is kept: the calculator reports it as JAX would."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return _name(node)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    raise _unsupported(node, "expected an axis name such as 'data'")


def _keyword_sets(keywords: list[ast.keyword]) -> dict[str, tuple[str, ...]]:
    """`unreduced={'a'}` / `reduced=frozenset({'a'})` as axis-name tuples by keyword."""
    found: dict[str, tuple[str, ...]] = {}
    for keyword in keywords:
        if keyword.arg not in _SET_KEYWORDS:
            raise _unsupported(keyword, "P(...) only takes the keywords unreduced= and reduced=")
        found[keyword.arg] = tuple(_names_in_set(keyword.value))
    return found


def _names_in_set(node: ast.expr) -> list[str]:
    """`{'a'}`, `set()`, `frozenset({'a'})` or `frozenset(['a'])`; like JAX, not a bare list."""
    if isinstance(node, ast.Call) and _last_name(node.func) in _SET_NAMES and not node.keywords:
        if not node.args:
            return []
        if len(node.args) == 1 and isinstance(node.args[0], (ast.Set, ast.List, ast.Tuple)):
            return [_name(item) for item in node.args[0].elts]
    if not isinstance(node, ast.Set):
        raise _unsupported(node, "expected a set of axis names such as {'data'}")
    return [_name(item) for item in node.elts]


def _last_name(node: ast.expr) -> str | None:
    """`P` for `P`, `jax.P` and `jax.sharding.P`; None for anything that is not a dotted name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr if _last_name(node.value) is not None else None
    return None


def _unsupported(node: ast.AST, why: str) -> ValueError:
    return ValueError(f"{why}; got {ast.unparse(node)!r}")
