"""Project configuration: `[tool.shardls]` in pyproject.toml, or the top level of shardls.toml.

Precedence, highest first: a pragma in the file (`# shardls: device-count=16`, applied by the
analyzer) > a command-line flag or editor setting > the configuration file > the defaults.
Each source becomes a `SettingsLayer`; `merge_settings` stacks them into the analysis'
`Settings`, remembering where the device count and the mesh came from so hovers can say it.

Keys (all optional):

    device-count = 8                    # devices assumed when the code does not say
    default-mesh = "data=2,model=4"     # or {data = 2, model = 4}; sizes may carry ":explicit"
    axis-types = "explicit"             # for the default mesh: one type, or one per axis
    select = ["SH0", "SH104"]           # rule codes or prefixes to report (default: all)
    extend-select = ["SH213"]           # added to the select of lower layers (the defaults)
    ignore = ["SH107"]                  # rule codes or prefixes never to report
    extend-ignore = ["SH203"]           # added to the ignore of every layer
    per-file-ignores = {"tests/*" = ["SH001"]}   # glob -> codes not reported in matching files
    extend-per-file-ignores = {"gen_*.py" = ["SH"]}
    exclude = ["experiments/", "*_pb2.py"]   # gitignore-style, relative to the file's directory
    dtype = "bfloat16"                  # dtype of arrays that do not name one
    hbm-per-device = "16GiB"            # device memory, for memory warnings
    optimizer = "adamw"                 # its state counts toward hbm-per-device (SH213)
    x64 = false                         # jax_enable_x64: keeps float64/int64 wide
    bare-noqa = false                   # a bare `# noqa` also silences shardls on its line
    cache-dir = ".shardls_cache"        # where `check` keeps its cache (relative to this file)

A bad value is a `ConfigError` whose one-line message names the file and the key.

Rule selection follows ruff: layers are applied lowest first; a layer's `select` starts the set
afresh and its `extend-select`, `ignore` and `extend-ignore` adjust it, the most specific code
or prefix deciding (`SH001` over `SH0`; `ignore` wins a tie). A higher layer's `ignore`
replaces the lower layers' `ignore` (`extend-ignore` accumulates). `per-file-ignores` are
applied last, to the files they match.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from shardls.analysis.rules import ALL_RULES
from shardls.analysis.settings import Settings
from shardls.core import AxisType, Mesh, parse_dtype
from shardls.core.suggest import closest, did_you_mean
from shardls.files import display_path, read_workspace_file
from shardls.globs import PatternSet
from shardls.meshtext import mesh_from_table, parse_axis_types, parse_mesh_text, with_axis_types

T = TypeVar("T")

CONFIG_FILE = "shardls.toml"
PYPROJECT = "pyproject.toml"

_BYTE_UNITS = {
    **{"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12},
    **{"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40},
}
_BYTES = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


class ConfigError(ValueError):
    """A configuration value shardls cannot use; the message is one line naming file and key."""


ALL_SELECTOR = "ALL"
"""Every rule, as in ruff (`select = ["ALL"]`); the least specific selector."""


@dataclass(frozen=True)
class FileIgnore:
    """One `per-file-ignores` entry: codes not reported in the files `pattern` matches.

    Patterns are gitignore-style, like `exclude`, relative to `base` (the configuration file's
    folder, or the working directory for a flag): `tests/` or `tests/*` for a folder,
    `__init__.py` at any depth, `**` across folders. A leading `!` applies the codes to the
    files the rest does not match, as in ruff.
    """

    pattern: str
    codes: frozenset[str]
    base: Path

    def applies_to(self, path: Path) -> bool:
        """Whether the file or one of its folders below `base` matches (both with symbolic
        links resolved, since configuration files are found by their resolved paths)."""
        negated = self.pattern.startswith("!")
        base = Path(os.path.realpath(self.base))
        patterns = PatternSet.parse(base, [self.pattern[1:] if negated else self.pattern])
        file = Path(os.path.realpath(path))
        matched = any(
            patterns.match(candidate, candidate != file) is True
            for candidate in (file, *file.parents)
            if base in candidate.parents
        )
        return matched != negated


@dataclass(frozen=True)
class SettingsLayer:
    """What one source (a file, the command line, the editor) says; None is 'not set here'."""

    origin: str
    """How hovers name this source: `pyproject.toml`, `the command line`, `editor settings`."""
    device_count: int | None = None
    default_mesh: Mesh | None = None
    select: frozenset[str] | None = None
    ignore: frozenset[str] | None = None
    extend_select: frozenset[str] | None = None
    extend_ignore: frozenset[str] | None = None
    per_file_ignores: tuple[FileIgnore, ...] | None = None
    extend_per_file_ignores: tuple[FileIgnore, ...] | None = None
    dtype: str | None = None
    """Checked when read, resolved in `merge_settings` once x64 is known from every layer."""
    x64: bool | None = None
    hbm_per_device: int | None = None
    optimizer: str | None = None
    bare_noqa: bool | None = None


@dataclass(frozen=True)
class Config:
    """A configuration file as read: its settings, and the exclude patterns rooted at its folder."""

    path: Path | None
    layer: SettingsLayer
    exclude: tuple[str, ...] = ()
    cache_dir: Path | None = None
    """`cache-dir`, made absolute from the file's folder: where `check` keeps its cache."""

    @property
    def root(self) -> Path | None:
        return None if self.path is None else self.path.parent


DEFAULT_CONFIG = Config(None, SettingsLayer("defaults"))


def find_config(start: Path) -> Path | None:
    """The nearest shardls.toml, or pyproject.toml with a `[tool.shardls]` table, from `start` upward.

    In one folder shardls.toml wins. A pyproject.toml without the table does not stop the
    search, so a package's own pyproject.toml inside a monorepo defers to the repository's.
    """
    try:
        folder = start.resolve()
    except (OSError, ValueError):  # no file can have this path (a NUL byte from an editor's URI)
        return None
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_FILE).is_file():
            return candidate / CONFIG_FILE
        pyproject = candidate / PYPROJECT
        if _mentions_shardls(pyproject) and "shardls" in _table(_read_toml(pyproject), "tool"):
            return pyproject
    return None


PROJECT_MARKERS = (PYPROJECT, "setup.py", "setup.cfg", ".git")


def workspace_root(path: Path, config: Config) -> Path:
    """Where imports are resolved from and other files are searched: the configuration file's
    folder, else the nearest folder above that looks like a project's root (so that
    `from pkg.models import modeling` resolves when one file of `pkg/models/` is checked), else
    the file's folder."""
    if config.root is not None:
        return config.root.resolve()
    folder = (path if path.is_dir() else path.parent).resolve()
    return next(
        (c for c in (folder, *folder.parents) if any((c / marker).exists() for marker in PROJECT_MARKERS)),
        folder,
    )


def config_for(start: Path) -> Config:
    """The configuration that applies to a file or folder: the nearest file's, or the defaults."""
    path = find_config(start)
    return DEFAULT_CONFIG if path is None else load_config(path)


def load_config(path: Path) -> Config:
    """Read and check one configuration file (a pyproject.toml without `[tool.shardls]` is empty)."""
    document = _read_toml(path)
    in_pyproject = path.name == PYPROJECT
    table = _table(document, "tool").get("shardls", {}) if in_pyproject else document
    read = _Reader(table, f"{display_path(path)}: " + ("[tool.shardls] " if in_pyproject else ""))
    mesh = read("default-mesh", mesh_setting)
    axis_types = read("axis-types", axis_types_setting)
    if axis_types is not None:
        if mesh is None:
            raise read.error("axis-types", "only applies to default-mesh, which is not set")
        try:
            mesh = with_axis_types(mesh, axis_types)
        except ValueError as error:
            raise read.error("axis-types", f"gives {error}") from None
    layer = SettingsLayer(
        display_path(path),
        device_count=read("device-count", device_count_setting),
        default_mesh=mesh,
        select=read("select", codes_setting),
        ignore=read("ignore", codes_setting),
        extend_select=read("extend-select", codes_setting),
        extend_ignore=read("extend-ignore", codes_setting),
        per_file_ignores=read("per-file-ignores", file_ignores_setting(path.parent)),
        extend_per_file_ignores=read("extend-per-file-ignores", file_ignores_setting(path.parent)),
        dtype=read("dtype", dtype_setting),
        x64=read("x64", flag_setting),
        hbm_per_device=read("hbm-per-device", bytes_setting),
        optimizer=read("optimizer", optimizer_setting),
        bare_noqa=read("bare-noqa", flag_setting),
    )
    cache_dir = read("cache-dir", folder_setting)
    return Config(
        path,
        layer,
        read("exclude", globs_setting) or (),
        None if cache_dir is None else Path(os.path.abspath(path.parent / cache_dir)),
    )


def merge_settings(*layers: SettingsLayer, file: Path | None = None) -> Settings:
    """Stack layers, later over earlier (file, then command line), into the analysis' Settings;
    with `file`, the `per-file-ignores` that match it are ignored too."""
    top = functools.partial(top_setting, layers)
    x64 = bool(top("x64")[0])
    dtype = top("dtype")[0]
    mesh, mesh_origin = top("default_mesh")
    count, count_origin = top("device_count")
    enabled = selected_rules(layers)
    return Settings(
        device_count=count,
        device_count_source=f"device-count from {count_origin}",
        default_mesh=mesh,
        default_mesh_source=f"default-mesh from {mesh_origin}",
        select=None if enabled == frozenset(ALL_RULES) else enabled,
        ignore=frozenset() if file is None else ignored_in_file(layers, file),
        dtype=None if dtype is None else parse_dtype(dtype, x64=x64),
        x64=x64,
        hbm_per_device=top("hbm_per_device")[0],
        optimizer=top("optimizer")[0],
        bare_noqa=bool(top("bare_noqa")[0]),
    )


def top_setting(layers: Sequence[SettingsLayer], name: str) -> tuple[Any, str]:
    """The value of the last layer that sets the field `name`, and that layer's origin."""
    for layer in reversed(layers):
        if getattr(layer, name) is not None:
            return getattr(layer, name), layer.origin
    return None, "defaults"


def selected_rules(layers: Sequence[SettingsLayer]) -> frozenset[str]:
    """The codes reported after every layer's select, extend-select, ignore and extend-ignore
    (the order and the specificity rule are in the module docstring)."""
    return _selected_rules(tuple(layers))


@functools.lru_cache(maxsize=256)
def _selected_rules(layers: tuple[SettingsLayer, ...]) -> frozenset[str]:
    """Memoized: `check` asks once per file, and the layers of a project are the same for all."""
    top_ignore = max((i for i, layer in enumerate(layers) if layer.ignore is not None), default=None)
    rules = set(ALL_RULES)
    for number, layer in enumerate(layers):
        enable = [*(layer.select or ()), *(layer.extend_select or ())]
        disable = [*((layer.ignore or ()) if number == top_ignore else ()), *(layer.extend_ignore or ())]
        decisions = {code: on for code in ALL_RULES if (on := _decide(code, enable, disable)) is not None}
        if layer.select is not None:
            rules = {code for code, on in decisions.items() if on}
        else:
            rules = (rules | {c for c, on in decisions.items() if on}) - {
                c for c, on in decisions.items() if not on
            }
    return frozenset(rules)


def _decide(code: str, enable: Sequence[str], disable: Sequence[str]) -> bool | None:
    """True/False when a selector of one layer is about `code`: the most specific one decides
    and a disabling one wins a tie; None when none is about it."""
    votes = [(_specificity(s), False) for s in enable if _selects(s, code)]
    votes += [(_specificity(s), True) for s in disable if _selects(s, code)]
    return None if not votes else not max(votes)[1]


def _selects(selector: str, code: str) -> bool:
    return selector == ALL_SELECTOR or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == ALL_SELECTOR else len(selector)


def ignored_in_file(layers: Sequence[SettingsLayer], file: Path) -> frozenset[str]:
    """The codes `per-file-ignores` (the highest layer's) and every `extend-per-file-ignores`
    ignore in `file`."""
    top = next(
        (layer.per_file_ignores for layer in reversed(layers) if layer.per_file_ignores is not None), ()
    )
    entries = [*top, *(entry for layer in layers for entry in layer.extend_per_file_ignores or ())]
    return frozenset(code for entry in entries if entry.applies_to(file) for code in entry.codes)


def parse_codes(text: str | Iterable[object]) -> frozenset[str]:
    """`SH001,SH1` or a list of codes; each must be a rule code, a prefix of one (`SH`, `SH0`) or
    `ALL`. A wrong one is named with the code it most resembles (a rule's name gives its code)."""
    items = [item.strip() for item in text.split(",")] if isinstance(text, str) else list(text)
    codes = set()
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"expected rule codes such as 'SH001' or prefixes such as 'SH1', got {item!r}")
        code = item.strip().upper()
        if code != ALL_SELECTOR and (not code or not any(known.startswith(code) for known in ALL_RULES)):
            raise ValueError(
                f"{item!r} is not a rule code or a prefix of one (such as SH001 or SH1){_code_hint(item)}"
            )
        codes.add(code)
    return frozenset(codes)


def _code_hint(item: str) -> str:
    by_name = {rule.name: code for code, rule in ALL_RULES.items()}
    name = closest(item.strip(), by_name)
    if name is not None:
        return f" (did you mean {by_name[name]}, {name}?)"
    code = closest(item.strip(), ALL_RULES)
    return "" if code is None else f" (did you mean {code}, {ALL_RULES[code].name}?)"


def parse_file_ignores(text: str, base: Path) -> tuple[FileIgnore, ...]:
    """`tests/*:SH001,SH002,gen.py:SH1` from the command line: each `GLOB:CODE` pair starts a
    pattern, and a code without a glob adds to the pattern before it."""
    entries: dict[str, set[str]] = {}
    current: str | None = None
    for item in (part.strip() for part in text.split(",")):
        glob, separator, code = item.rpartition(":")
        if separator:
            current = glob.strip()
        if not current or not code.strip():
            raise ValueError(f"expected GLOB:CODES such as 'tests/*:SH001,SH002', got {text!r}")
        entries.setdefault(current, set()).update(parse_codes([code]))
    return tuple(FileIgnore(glob, frozenset(codes), base) for glob, codes in entries.items())


def parse_bytes(text: str | int) -> int:
    """`16GiB`, `16 GB`, `1.5TiB` or a number of bytes; binary and decimal units as written."""
    if isinstance(text, int) and not isinstance(text, bool) and text > 0:
        return text
    match = _BYTES.fullmatch(text) if isinstance(text, str) else None
    unit = _BYTE_UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or float(match.group(1)) <= 0:
        raise ValueError(f"expected a size such as '16GiB', '80GB' or a number of bytes, got {text!r}")
    return int(float(match.group(1)) * unit)


def _mentions_shardls(pyproject: Path) -> bool:
    """Whether a pyproject.toml may configure shardls; others are never parsed, so that a broken
    pyproject.toml of an unrelated parent folder cannot stop a check."""
    try:
        return b"shardls" in read_workspace_file(pyproject, [pyproject.parent])
    except OSError:
        return False


def _table(document: dict[str, object], key: str) -> dict[str, object]:
    value = document.get(key, {})
    return value if isinstance(value, dict) else {}


def _read_toml(path: Path) -> dict[str, object]:
    """The document; read as a file of its own folder (`read_workspace_file`: no FIFO, device or
    link out of it), and a nesting too deep for the parser is an error, not a crash. The parser
    is imported here: 5-9 ms of start-up that a project without a configuration file never pays."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(read_workspace_file(path, [path.parent]).decode("utf-8"))
    except OSError as error:
        raise ConfigError(f"{display_path(path)}: cannot read: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{display_path(path)}: not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(
            f"{display_path(path)}: not valid TOML: arrays or tables nested too deeply"
        ) from None


# The checks of each setting's value, shared with the editor's settings (`shardls.server`):
# each raises ValueError saying what was expected.


def device_count_setting(value: object) -> int:
    """A positive integer; editors may send it as text ("16")."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def mesh_setting(value: object) -> Mesh:
    if isinstance(value, str):
        return parse_mesh_text(value)
    if isinstance(value, dict):
        return mesh_from_table(value)
    raise ValueError(f"expected text such as 'data=2,model=4' or a table of axis sizes, got {value!r}")


def axis_types_setting(value: object) -> tuple[AxisType, ...]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        value = ",".join(value)
    if not isinstance(value, str):
        raise ValueError(f"expected 'explicit' or a list such as ['explicit', 'auto'], got {value!r}")
    return parse_axis_types(value)


def codes_setting(value: object) -> frozenset[str]:
    if not isinstance(value, (str, list)):
        raise ValueError(f"expected a list of rule codes such as ['SH001', 'SH1'], got {value!r}")
    return parse_codes(value)


def file_ignores_setting(base: Path) -> Callable[[object], tuple[FileIgnore, ...]]:
    """A table of glob patterns to lists of codes, rooted at the configuration file's folder."""

    def convert(value: object) -> tuple[FileIgnore, ...]:
        if not isinstance(value, dict) or not all(isinstance(glob, str) and glob for glob in value):
            raise ValueError(
                f'expected a table of glob patterns to rule codes such as {{"tests/*" = ["SH001"]}}, got {value!r}'
            )
        entries = []
        for glob, codes in value.items():
            try:
                entries.append(FileIgnore(glob, codes_setting(codes), base))
            except ValueError as error:
                raise ValueError(f"{glob!r}: {error}") from None
        return tuple(entries)

    return convert


def globs_setting(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"expected a list of glob patterns such as ['build/', '*_pb2.py'], got {value!r}")
    return tuple(value)


def folder_setting(value: object) -> str:
    if not isinstance(value, str) or not value or "\0" in value:
        raise ValueError(f"expected a folder such as '.shardls_cache', got {value!r}")
    return value


def dtype_setting(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a dtype name such as 'bfloat16', got {value!r}")
    parse_dtype(value)
    return value


def bytes_setting(value: object) -> int:
    if not isinstance(value, (str, int)):
        raise ValueError(f"expected a size such as '16GiB', got {value!r}")
    return parse_bytes(value)


def optimizer_setting(value: object) -> str:
    from shardls.memory.optimizer import OPTIMIZERS

    if not isinstance(value, str) or value not in OPTIMIZERS:
        raise ValueError(f"expected one of {', '.join(OPTIMIZERS)}, got {value!r}")
    return str(value)


def flag_setting(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


KEYS = (
    "device-count",
    "default-mesh",
    "axis-types",
    "select",
    "extend-select",
    "ignore",
    "extend-ignore",
    "per-file-ignores",
    "extend-per-file-ignores",
    "exclude",
    "dtype",
    "hbm-per-device",
    "optimizer",
    "x64",
    "bare-noqa",
    "cache-dir",
)


class _Reader:
    """Reads the keys of one table, turning a converter's ValueError into a ConfigError that
    names the file and the key; refuses keys it does not know (a typo would be silently ignored)."""

    def __init__(self, table: object, prefix: str) -> None:
        self.prefix = prefix
        if not isinstance(table, dict):
            raise ConfigError(f"{prefix}expected a table of settings, got {table!r}")
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            key = str(unknown[0])
            raise self.error(key, f"unknown key; the keys are {', '.join(KEYS)}{did_you_mean(key, KEYS)}")
        self.table: dict[str, object] = table

    def __call__(self, key: str, convert: Callable[[object], T]) -> T | None:
        if key not in self.table:
            return None
        try:
            return convert(self.table[key])
        except ValueError as error:
            raise self.error(key, str(error)) from None

    def error(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"{self.prefix}{key}: {why}")
