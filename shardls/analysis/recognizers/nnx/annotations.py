"""What Flax reads from a parameter's metadata when it shards the value at creation: the
annotation of a layer parameter (`*_init=nnx.with_partitioning(...)`, `*_metadata={...}`), of
`nnx.Param(value, out_sharding=...)`, or JAX's own `out_sharding` on an explicit-mode initializer.

Entries are merged as `Variable.__init__` merges them, with the spans of their keys and specs,
for the diagnostics and quick fixes of the sites built on them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Frame, truthiness
from shardls.analysis.facts import Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx import ShardedInitializerV, with_spans
from shardls.analysis.logical import Rules, read_rules
from shardls.analysis.recognizers.nnx.layers import ParamDecl
from shardls.analysis.values import Const, DictV, InitializerV, SpecV, Value

_DEPRECATED_KEYS = ("sharding", "sharding_names")
"""Flax remaps these to `out_sharding` (in this order, so the last one wins) with a warning."""


@dataclass(frozen=True)
class _Entry:
    """One metadata item as Flax receives it, with where its key is written."""

    key: str
    value: Value
    key_span: Span | None = None


@dataclass(frozen=True)
class Annotation:
    """What Flax reads from a variable's metadata when it shards the value at creation."""

    sharding: Value
    mesh: Value | None
    rules: Rules | None
    eager: bool | None
    """`eager_sharding=` of the metadata; None when not written (Flax's setting decides, True
    unless `nnx.use_eager_sharding(False)` is in effect)."""
    source: str
    """The keyword the annotation comes from (`kernel_init`, `bias_metadata`, `out_sharding`)."""
    keyword_span: Span | None
    shared_instead_of: str | None = None
    """For MultiHeadAttention's `out`: the `out_*` keyword that was not given, so the shared
    `kernel_*`/`bias_*` annotation applies."""
    deprecated: tuple[_Entry, ...] = ()
    created_sharded: bool = False
    """JAX's `out_sharding` on the initializer (explicit mode), not Flax metadata: the array is
    created with this layout, and neither Flax's mesh lookup nor logical rules apply."""
    existing: bool = False
    """The parameter wraps an array placed elsewhere (`nnx.Param(jax.device_put(x, s))`): its
    layout is that array's, and the placing site checked it."""


def _annotation(
    entries: list[_Entry], source: str, keyword_span: Span | None, line: int
) -> Annotation | None:
    """Merge metadata as `Variable.__init__` does: later entries win, then the deprecated keys are
    renamed to `out_sharding`; an empty `out_sharding` means no sharding at all."""
    merged = {entry.key: entry for entry in entries}
    for key in _DEPRECATED_KEYS:
        if key in merged:
            merged["out_sharding"] = merged.pop(key)
    out = merged.get("out_sharding")
    if out is None or _is_empty(out.value):
        return None
    eager = merged.get("eager_sharding")
    rules = merged.get("sharding_rules")
    rules_line = rules.key_span.line if rules is not None and rules.key_span is not None else line
    return Annotation(
        out.value,
        merged["mesh"].value if "mesh" in merged else None,
        read_rules(rules.value, f"sharding_rules at line {rules_line + 1}") if rules else None,
        None if eager is None else truthiness(eager.value) is not False,
        source,
        keyword_span,
        deprecated=tuple(e for e in entries if e.key in _DEPRECATED_KEYS),
    )


def layer_annotation(call: CallArgs, decl: ParamDecl) -> Annotation | None:
    """A layer parameter's annotation: its `*_metadata` dict, then its `*_init` initializer's
    metadata on top (`Variable.__init__` updates the one with the other)."""
    metadata_key, metadata_index = _first_given(call, decl.metadata)
    init_key, init_index = _first_given(call, decl.init)
    entries = _dict_entries(call, metadata_key) if metadata_key else []
    initializer = call.kwargs.get(init_key) if init_key else None
    source, index, keys = metadata_key, metadata_index, decl.metadata
    if isinstance(initializer, ShardedInitializerV):
        return created_sharded_annotation(initializer.out_sharding, init_key or "", call)
    if isinstance(initializer, InitializerV):
        entries += [_Entry("out_sharding", initializer.spec), _Entry("mesh", initializer.mesh or Const(None))]
        entries += (
            [_Entry("sharding_rules", initializer.rules, initializer.span)] if initializer.rules else []
        )
        source, index, keys = init_key, init_index, decl.init
    if source is None:
        return None
    keyword = call.arg_node(None, source)
    span = call.frame.span(keyword) if keyword is not None else None
    found = _annotation(entries, source, span, call.frame.line_of(call.node))
    if found is None or index == 0:
        return found
    return replace(found, shared_instead_of=keys[0])


def param_annotation(call: CallArgs) -> Annotation | None:
    """`nnx.Param(value, out_sharding=..., mesh=..., sharding_rules=...)` (also `**metadata`)."""
    spans = {k.arg: _name_span(call.frame, k) for k in call.node.keywords if k.arg is not None}
    entries = [_Entry(key, _spanned(call, key, value), spans.get(key)) for key, value in call.kwargs.items()]
    line = call.frame.line_of(call.node)
    keyword = next((k for k in reversed(entries) if k.key in ("out_sharding", *_DEPRECATED_KEYS)), None)
    return _annotation(
        entries, keyword.key if keyword else "out_sharding", keyword.key_span if keyword else None, line
    )


def created_sharded_annotation(
    sharding: Value, source: str, call: CallArgs, existing: bool = False
) -> Annotation:
    """An array JAX creates with its layout (`out_sharding=` on an explicit-mode initializer, or
    an array placed before `nnx.Param` wraps it, `existing`): neither Flax's mesh lookup nor the
    logical rules apply to it."""
    keyword = call.arg_node(None, source) if source else None
    span = call.frame.span(keyword) if keyword is not None else None
    return Annotation(
        sharding, None, None, True, source or "out_sharding", span, created_sharded=True, existing=existing
    )


def _first_given(call: CallArgs, keys: tuple[str, ...]) -> tuple[str | None, int]:
    """The first keyword given a truthy value (`out_kernel_init or kernel_init`); an unknown value
    counts as given."""
    for index, key in enumerate(keys):
        value = call.kwargs.get(key)
        if value is not None and truthiness(value) is not False:
            return key, index
    return None, -1


def _dict_entries(call: CallArgs, key: str) -> list[_Entry]:
    """The items of a `*_metadata` dict, with the spans of a literal dict's keys and specs."""
    value = call.kwargs.get(key)
    if not isinstance(value, DictV):
        return []
    node = call.arg_node(None, key)
    literal = isinstance(node, ast.Dict) and len(node.keys) == len(value.keys) and None not in node.keys
    key_nodes: list[ast.expr | None] = list(node.keys) if literal else [None] * len(value.keys)  # type: ignore[union-attr]
    value_nodes: list[ast.expr | None] = list(node.values) if literal else [None] * len(value.keys)  # type: ignore[union-attr]
    entries = []
    for name, item, key_node, value_node in zip(value.keys, value.values, key_nodes, value_nodes):
        if isinstance(name, Const) and isinstance(name.value, str):
            span = _inside_quotes(call.frame.span(key_node), name.value) if key_node is not None else None
            entries.append(
                _Entry(name.value, _with_spans_if_spec(name.value, item, value_node, call.frame), span)
            )
    return entries


def _spanned(call: CallArgs, key: str, value: Value) -> Value:
    return _with_spans_if_spec(key, value, call.arg_node(None, key), call.frame)


def _with_spans_if_spec(key: str, value: Value, node: ast.expr | None, frame: Frame) -> Value:
    return with_spans(value, node, frame) if key in ("out_sharding", *_DEPRECATED_KEYS) else value


def _inside_quotes(span: Span, text: str) -> Span:
    """`"sharding"` -> `sharding`: a rename quick fix replaces the same text as for a keyword."""
    if span.line == span.end_line and span.end_column - span.column == len(text) + 2:
        return Span(span.line, span.column + 1, span.line, span.end_column - 1)
    return span


def _name_span(frame: Frame, keyword: ast.keyword) -> Span:
    """Just the name of `name=value` (what a rename quick fix replaces)."""
    whole = frame.span(keyword)
    return Span(whole.line, whole.column, whole.line, whole.column + len(keyword.arg or ""))


def _is_empty(value: Value) -> bool:
    """Flax shards nothing for a falsy annotation (`None`, `()`, `P()`)."""
    if isinstance(value, SpecV):
        return not value.spec.entries and not value.unknown_entries
    return truthiness(value) is False
