"""OmegaConf configs: `OmegaConf.load(path)` of a workspace YAML file, `create`, `merge`,
`from_cli`/`from_dotlist` of `key=value` strings, and `to_container`.

A config loaded from a file holds the file's values as `library/yaml_files.py` reads them for
OmegaConf (each an assumption naming the file and key; `${...}` interpolations, strings OmegaConf
reads as floats and files with a repeated key unknown). A `DictConfig` is an `OmegaConfV`, read as
`cfg.key`, `cfg["key"]` or `cfg.get("key", default)`; a nested mapping reads the same way.
`merge` merges mappings key by key, deeper mappings recursively, anything else replaced by the
later config, as OmegaConf does for configs without a schema; `from_cli(["a.b=4"])` makes nested
keys of dotted ones, each value read as YAML (the code's own text, so not an assumption). What
OmegaConf does beyond this (structured configs, `~key` deletions and `+key` additions, missing
values `???`, resolvers) stays unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.paths import path_text
from shardls.analysis.library.registry import attributes, calls, methods, subscripts
from shardls.analysis.library.yaml_files import file_values, text_values
from shardls.analysis.values import BoundMethod, Const, DictV, Seq, Unknown, Value, as_str


@dataclass(frozen=True)
class OmegaConfV(Value):
    """A `DictConfig` of known entries."""

    tree: DictV


_OMEGACONF = "omegaconf.OmegaConf"


def _wrapped(value: Value) -> Value:
    """What reading a config gives: a mapping is a config again; `???` is a missing value."""
    if isinstance(value, DictV):
        return OmegaConfV(value)
    if isinstance(value, Const) and value.value == "???":
        return Unknown("a missing value (???), set at run time")
    return value


def _tree(value: Value | None) -> DictV | None:
    if isinstance(value, OmegaConfV):
        return value.tree
    return value if isinstance(value, DictV) else None


@calls(f"{_OMEGACONF}.load")
def _load(call: CallArgs) -> Value | None:
    path = path_text(call.get(0, "file_") or Const(None))
    if path is None:
        return None
    return _wrapped(file_values(call, path, omegaconf=True))


@calls(f"{_OMEGACONF}.create")
def _create(call: CallArgs) -> Value | None:
    content = call.get(0, "obj")
    if content is None:
        return OmegaConfV(DictV((), ()))
    text = as_str(content)
    if text is not None:
        return _wrapped(text_values(text, content.origin, omegaconf=True))
    tree = _tree(content)
    return None if tree is None else OmegaConfV(tree)


@calls(f"{_OMEGACONF}.from_cli", f"{_OMEGACONF}.from_dotlist")
def _from_dotlist(call: CallArgs) -> Value | None:
    given = call.get(0, "args_list", "dotlist")
    if not isinstance(given, Seq):
        return None  # `from_cli()` reads sys.argv: the command line of a run
    tree = DictV((), ())
    for item in given.items:
        text = as_str(item)
        if text is None or "=" not in text or text.startswith(("~", "+")):
            return Unknown("a command-line override shardls does not read")
        dotted, _, value_text = text.partition("=")
        if not value_text:
            return Unknown("an override with no value")
        value = text_values(value_text, item.origin, omegaconf=True)
        for key in reversed(dotted.split(".")):
            value = DictV((Const(key),), (value,))
        assert isinstance(value, DictV)
        tree = _merged(tree, value)
    return OmegaConfV(tree)


@calls(f"{_OMEGACONF}.merge")
def _merge(call: CallArgs) -> Value | None:
    if call.kwargs or not call.args:
        return None
    trees = [_tree(arg) for arg in call.args]
    if any(tree is None for tree in trees):
        return Unknown("a merge with a config not known here")
    merged = DictV((), ())
    for tree in trees:
        assert tree is not None
        merged = _merged(merged, tree)
    return OmegaConfV(merged)


def _merged(base: DictV, other: DictV) -> DictV:
    entries = dict(zip(base.keys, base.values))
    for key, value in zip(other.keys, other.values):
        before = entries.get(key)
        if isinstance(before, DictV) and isinstance(value, DictV):
            value = _merged(before, value)
        elif before is not None and isinstance(before, DictV) != isinstance(value, DictV):
            value = Unknown(f"a mapping and a value merged at {key}")  # OmegaConf may refuse it
        entries[key] = value
    return DictV(tuple(entries), tuple(entries.values()))


@calls(f"{_OMEGACONF}.to_container")
def _to_container(call: CallArgs) -> Value | None:
    return _tree(call.get(0, "cfg"))


@attributes(OmegaConfV)
def _config_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if not isinstance(base, OmegaConfV):
        return None
    found = base.tree.get(attr)
    return Unknown(f"config key {attr!r} is not set", symbol=attr) if found is None else _wrapped(found)


@subscripts
def _config_item(base: Value, index: Value | slice) -> Value | None:
    if not isinstance(base, OmegaConfV) or not isinstance(index, Const):
        return None
    found = base.tree.get(index.value)
    return Unknown(f"config key {index.value!r} is not set") if found is None else _wrapped(found)


@methods(OmegaConfV, "get")
def _config_get(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    config = method.base
    assert isinstance(config, OmegaConfV)
    key = call.get(0, "key")
    if not isinstance(key, Const):
        return None
    found = config.tree.get(key.value)
    return _wrapped(found) if found is not None else (call.get(1, "default_value") or Const(None))
