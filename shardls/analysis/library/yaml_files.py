"""YAML configs read as the code reads them, with PyYAML's safe loader only.

`yaml.safe_load(open(path))` (or `with open(path) as f: yaml.safe_load(f)`, `f.read()`,
`yaml.load(f, Loader=yaml.SafeLoader)`) of a `.yml`/`.yaml` file of the workspace, named by a
path shardls can evaluate (`library/paths.py`), gives the file's mappings, lists and scalars. A
string given to `yaml.safe_load` (the value of a `key=value` override a loader splits off) is
parsed the same way and keeps the string's own origin.

Every value read from a file is a default a run can override (another file, a command-line
`key=value`, an environment variable), so each scalar is marked as an assumption naming the file,
the key and the value (`from base.yml: ici_fsdp_parallelism=-1`): a problem resting on it is at
most a warning. What is not read stays unknown: a relative path (resolved against the directory a
run starts in), a file outside the workspace or not readable, text that is not one valid YAML
document, a tag the safe loader refuses, values other than numbers, strings, booleans and null,
a key that several merged mappings (`<<:`) give different values, and a file whose nodes
(aliases counted each time they are used, merged ones too) exceed `_MAX_NODES`. OmegaConf's
reading of a file (`library/omegaconf_.py`) is the same with its differences unknown.

PyYAML is imported only when code loads a YAML file; without it the value is unknown.
"""

from __future__ import annotations

import importlib
import os
from collections import OrderedDict
from typing import Any

from shardls.analysis.data_file import DataFile
from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.values import Const, DictV, FileV, Origin, Ref, Seq, Unknown, Value, as_str

_SUFFIXES = (".yml", ".yaml")
_MAX_NODES = 20_000
"""Nodes of one file turned into values: MaxText's `base.yml` has 1,112 (read in ~20 ms)."""
_MAX_DEPTH = 64
_SAFE_LOADERS = frozenset({"yaml.SafeLoader", "yaml.CSafeLoader", "yaml.loader.SafeLoader"})
_KEPT = 32
"""Files whose values are kept (by path and text): every config reader of a run reads the same few."""

_MERGE = "tag:yaml.org,2002:merge"

Key = int | float | str | bool
"""A mapping key the values keep (the safe loader allows others, which stay unknown)."""

_values: OrderedDict[tuple[str, str, bool], Value] = OrderedDict()


@calls("yaml.safe_load", "yaml.load")
def _load(call: CallArgs) -> Value | None:
    stream = call.get(0, "stream")
    if call.qualname == "yaml.load":
        loader = call.get(1, "Loader")
        if not (isinstance(loader, Ref) and loader.qualname in _SAFE_LOADERS):
            return Unknown("yaml.load with a loader other than the safe one")
    if isinstance(stream, FileV):
        return file_values(call, stream.path)
    text = as_str(stream or Const(None))
    if text is None or not isinstance(stream, Const):
        return None
    return text_values(text, stream.origin)


def file_values(call: CallArgs, path: str, omegaconf: bool = False) -> Value:
    """The values of the YAML file at `path`, as the safe loader reads it (`omegaconf`: as
    `OmegaConf.load` does, `_Converter`)."""
    name = os.path.basename(path)
    if not path.endswith(_SUFFIXES):
        return Unknown(f"{name} is not read as a YAML file (only .yml and .yaml)")
    if not os.path.isabs(path):
        return Unknown(f"{path} is relative to the directory a run starts in")
    resolver = call.evaluator.resolver
    if not resolver.within(path, call.frame.module):
        return Unknown(f"{path} is outside the workspace")
    data = resolver.data_file(path)
    if call.evaluator.reads is not None:
        call.evaluator.reads.modules[data.path] = data
    if data.text is None:
        return Unknown(f"{name} is not a readable file of the workspace")
    key = (data.path, data.text, omegaconf)
    kept = _values.get(key)
    if kept is None:
        kept = _values[key] = _read(data, omegaconf)
        while len(_values) > _KEPT:
            _values.popitem(last=False)
    else:
        _values.move_to_end(key)
    return kept


def _read(data: DataFile, omegaconf: bool) -> Value:
    assert data.text is not None
    name = os.path.basename(data.path)
    node = _composed(data.text)
    if isinstance(node, Unknown):
        return Unknown(f"{name}: {node.reason}")
    if node is None:
        return Const(None)
    return _Converter(name, data.path, None, omegaconf).value(node, "", 0)


def text_values(text: str, origin: Origin | None, omegaconf: bool = False) -> Value:
    """The values of YAML text the code holds, each with the text's own origin."""
    node = _composed(text)
    if isinstance(node, Unknown) or node is None:
        return node if node is not None else Const(None, origin=origin)
    return _Converter(None, None, origin, omegaconf).value(node, "", 0)


def _yaml() -> Any:
    """PyYAML (untyped here: no stubs are installed with it)."""
    return importlib.import_module("yaml")


def _composed(text: str) -> Any:
    """The document's node tree (None: an empty document), or Unknown."""
    try:
        yaml = _yaml()
    except ImportError:
        return Unknown("PyYAML is not installed")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.compose(text, Loader=loader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return Unknown("not one valid YAML document")


class _Converter:
    """Values of a composed YAML document, each scalar constructed by the safe loader and marked
    with where it is written. For OmegaConf (`omegaconf`), whose loader is the safe one with more
    floats (`1e-3`) and no repeated keys, and whose strings may be `${...}` interpolations
    resolved when read: such strings, a string `float()` reads and a mapping with a repeated key
    are unknown."""

    def __init__(self, name: str | None, path: str | None, origin: Origin | None, omegaconf: bool) -> None:
        yaml = _yaml()
        self.yaml = yaml
        self.name = name
        self.path = path
        self.origin = origin
        self.constructor = yaml.SafeLoader("")
        self.nodes = 0
        self.omegaconf = omegaconf

    def value(self, node: Any, dotted: str, depth: int) -> Value:
        self.nodes += 1
        if self.nodes > _MAX_NODES or depth > _MAX_DEPTH:
            return Unknown(f"{self.name or 'the YAML text'} is too large or too deeply nested to read")
        if isinstance(node, self.yaml.MappingNode):
            return self._mapping(node, dotted, depth)
        if isinstance(node, self.yaml.SequenceNode):
            items = tuple(self.value(item, f"{dotted}[{i}]", depth + 1) for i, item in enumerate(node.value))
            return Seq(items, is_list=True)
        scalar = self._scalar(node)
        if isinstance(scalar, Unknown):
            return scalar
        return Const(scalar, origin=self._origin(dotted, scalar, node))

    def _mapping(self, node: Any, dotted: str, depth: int) -> Value:
        """A mapping as the safe loader builds it: the entries of `<<:` merge keys first (a key
        that merged mappings give different values is unknown), then its own, which win; a
        repeated key keeps its first place and its last value. Merged mappings are converted like any node, so an alias merged many
        times counts each time against `_MAX_NODES` (the loader's own flattening would copy it)."""
        sources: list[Any] = []
        own: list[tuple[Key, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources += (
                    value_node.value if isinstance(value_node, self.yaml.SequenceNode) else [value_node]
                )
                continue
            key = self._scalar(key_node) if isinstance(key_node, self.yaml.ScalarNode) else None
            if key is None or isinstance(key, Unknown):
                return Unknown(f"{self.name or 'the YAML text'}: a key that is not a plain value")
            own.append((key, value_node))
        entries = self._merged(sources, dotted, depth)
        if isinstance(entries, Unknown):
            return entries
        if self.omegaconf and len({key for key, _ in own}) < len(own):
            return Unknown(f"{self.name or 'the YAML text'}: a repeated key, which OmegaConf refuses")
        for key, value_node in own:
            entries[key] = self.value(value_node, f"{dotted}.{key}" if dotted else str(key), depth + 1)
        return DictV(tuple(Const(key) for key in entries), tuple(entries.values()))

    def _merged(self, sources: list[Any], dotted: str, depth: int) -> dict[Key, Value] | Unknown:
        merged: dict[Key, Value] = {}
        for source in sources:
            if not isinstance(source, self.yaml.MappingNode):
                return Unknown(f"{self.name or 'the YAML text'}: a merge key of something not a mapping")
            value = self._mapping(source, dotted, depth + 1)
            if not isinstance(value, DictV):
                return value if isinstance(value, Unknown) else Unknown("a merge the loader refuses")
            self.nodes += 1
            if self.nodes > _MAX_NODES or depth > _MAX_DEPTH:
                return Unknown(f"{self.name or 'the YAML text'} is too large or too deeply nested to read")
            for key, item in zip(value.keys, value.values):
                assert isinstance(key, Const)
                name: Key = key.value  # type: ignore[assignment]
                if name in merged and merged[name] != item:
                    # PyYAML's choice between merged mappings that disagree differs between its
                    # versions and with how often the mappings were merged before
                    item = Unknown(f"{name!r} of several merged mappings", symbol=str(name))
                merged[name] = item
        return merged

    def _scalar(self, node: Any) -> int | float | str | bool | None | Unknown:
        try:
            value: Any = self.constructor.construct_object(node, deep=True)
        except (self.yaml.YAMLError, ValueError, OverflowError):
            return Unknown(f"{self.name or 'the YAML text'}: a value the safe loader refuses")
        if self.omegaconf and isinstance(value, str) and _omegaconf_reads_otherwise(value):
            return Unknown(f"{self.name or 'the YAML text'}: {value!r}, which OmegaConf reads otherwise")
        if value is None or isinstance(value, int | float | str | bool):
            return value
        return Unknown(f"{self.name or 'the YAML text'}: a {type(value).__name__} value")

    def _origin(self, dotted: str, scalar: object, node: Any) -> Origin | None:
        if self.name is None:  # text the code holds: as known, or as assumed, as that text
            return self.origin
        shown = f"{dotted}={scalar!r}" if isinstance(scalar, str) else f"{dotted}={scalar}"
        return Origin(
            f"from {self.name}: {shown}",
            self.path,
            node.start_mark.line,
            assumption=f"{shown} from {self.name} (a run may override it)",
        )


def _omegaconf_reads_otherwise(text: str) -> bool:
    """A string the safe loader keeps that OmegaConf does not: an interpolation, or a float."""
    if "${" in text:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True
