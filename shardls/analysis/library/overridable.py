"""Values a run can override: the defaults of command-line flags and configs.

`argparse`, absl flags, `mlxu` flags and `ml_collections` configs all give the value a script
runs with unless told otherwise. That value is the best static answer, but only an assumption:
each number or string in it says where the default is written and that a run may pass another,
so that a problem resting on it is at most a warning naming it.
"""

from __future__ import annotations

from shardls.analysis.values import Const, DictV, Origin, Seq, Value


def overridable(value: Value, text: str, assumption: str, path: str | None, line: int | None) -> Value:
    """`value` as a default: its known leaves (a number, a string, the items of a tuple or the
    values of a dict) carry `text` as their origin and `assumption` as what they rest on."""
    origin = Origin(text, path, line, assumption=assumption)
    return _marked(value, origin)


def _marked(value: Value, origin: Origin) -> Value:
    if isinstance(value, Const):
        return Const(value.value, origin=origin)
    if isinstance(value, Seq):
        return Seq(tuple(_marked(item, origin) for item in value.items), value.is_list)
    if isinstance(value, DictV):
        return DictV(value.keys, tuple(_marked(item, origin) for item in value.values))
    return value
