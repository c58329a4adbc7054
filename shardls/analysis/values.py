"""Abstract values of the bounded interpreter, each with where it came from.

Nothing here runs user code: a value is what the analyzer could prove about an expression.
`Unknown` is a first-class answer (with a symbol name when one helps, e.g. `d_model`), and
`Choice` keeps both outcomes of a branch instead of guessing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shardls.analysis.facts import Span
from shardls.core import DType, Mesh, MeshConstructor, PartitionSpec, Problem
from shardls.core.typing import ShardedType
from shardls.stored_init import stored_init

if TYPE_CHECKING:
    from shardls.analysis.definitions import ClassInfo, FunctionInfo
    from shardls.analysis.evaluation.frame import Frame
    from shardls.analysis.module_info import ModuleInfo
    from shardls.analysis.scopes import Scope
    from shardls.analysis.source import Segment


@stored_init
@dataclass(frozen=True)
class Origin:
    """Where a number came from, in words a hover can show ("literal at line 12")."""

    text: str
    path: str | None = None
    line: int | None = None
    """0-based line in `path`."""
    assumption: str | None = None
    """Set when the number rests on something nobody stated (`8 devices (default device count)`):
    carried through arithmetic, so that a problem it decides is never reported as certain."""

    @property
    def assumed(self) -> bool:
        return self.assumption is not None

    def describe(self) -> str:
        if self.line is None:
            return self.text
        where = f"line {self.line + 1}"
        return (
            f"{self.text} at {where}" if self.path is None else f"{self.text} at {self.path}:{self.line + 1}"
        )


@stored_init
@dataclass(frozen=True, kw_only=True)
class Value:
    origin: Origin | None = field(default=None, compare=False)


@stored_init
@dataclass(frozen=True)
class Const(Value):
    value: int | float | str | bool | bytes | complex | None


@stored_init
@dataclass(frozen=True)
class Seq(Value):
    items: tuple[Value, ...]
    is_list: bool = False


@stored_init
@dataclass(frozen=True)
class DictV(Value):
    keys: tuple[Value, ...]
    values: tuple[Value, ...]

    def get(self, key: object) -> Value | None:
        for k, v in zip(self.keys, self.values):
            if isinstance(k, Const) and k.value == key:
                return v
        return None


@stored_init
@dataclass(frozen=True)
class SetV(Value):
    items: tuple[Value, ...]


@stored_init
@dataclass(frozen=True)
class StreamV(Value):
    """What a generator's call gives (`for x, y in dataset(steps, batch)`): items whose number is
    not known here, each one of `item` (the values its `yield`s give with the call's arguments,
    a choice when there are several). A loop over it binds `item`; anything that needs the items
    one by one (`list(...)`, `*args`, a comprehension) finds their number unknown."""

    item: Value


@stored_init
@dataclass(frozen=True)
class SliceV(Value):
    """`a:b:c` as one entry of a tuple index (`x[0:4, ::2]`); a bound not written is None."""

    lower: Value | None
    upper: Value | None
    step: Value | None


@stored_init
@dataclass(frozen=True)
class Unknown(Value):
    reason: str
    symbol: str | None = None


@stored_init
@dataclass(frozen=True)
class UnknownInt(Unknown):
    """A Python int whose value is not known here (`len(devices)`, `int(s)`, arithmetic on
    them): as a shape, one dimension (`jnp.zeros(len(devices))` has rank 1)."""


@stored_init
@dataclass(frozen=True)
class MatchV(Value):
    """A regular expression's match (`re.search(rule, name)` that found one): never None, true,
    with its groups (`group(0)` first, None for a group that took no part)."""

    groups: tuple[str | None, ...]


@stored_init
@dataclass(frozen=True)
class Choice(Value):
    """Several possible values (if/else branches, conditional expressions)."""

    options: tuple[Value, ...]
    guards: tuple[frozenset[Guard], ...] = field(default=(), compare=False)
    """Per option, the `if` branches it comes through (none known: empty). Values set together in
    one branch (`bias = ...; spec = P(...)`) stay together: an option of one `if` branch never
    meets an option of the other branch of the same `if` in one combination."""


@stored_init
@dataclass(frozen=True)
class Ref(Value):
    """A library object (module, function, class or constant) by its canonical dotted name."""

    qualname: str


@stored_init
@dataclass(frozen=True)
class BoundMethod(Value):
    """A method of a library value (`devices.reshape`, `x.astype`), called through the library."""

    base: Value
    name: str


@stored_init
@dataclass(frozen=True, eq=False)
class ModuleV(Value):
    module: ModuleInfo


@stored_init
@dataclass(frozen=True, eq=False)
class ClassV(Value):
    cls: ClassInfo


@stored_init
@dataclass(frozen=True, eq=False)
class FunctionV(Value):
    func: FunctionInfo
    bound: Value | None = None
    """`self` or `cls` for a bound method."""
    closure: Frame | None = None
    """For a function defined inside another one's call, that call's frame: the names of the
    enclosing function it reads (`rules` in `def get_partition_spec(name, leaf)` nested in
    `match_partition_rules(rules, params)`) are that call's arguments, not unknown parameters."""


@stored_init
@dataclass(frozen=True, eq=False)
class PartialV(Value):
    """`functools.partial(f, *args, **kwargs)` of a workspace function or of a JAX array function
    (`partial(jnp.argmax, axis=-1)`): calling it calls `f` with these arguments first and the
    call's after (its keywords overriding these), as Python does."""

    func: FunctionV | Ref
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...]


@stored_init
@dataclass(frozen=True, eq=False)
class InstanceV(Value):
    """An instance of a workspace class, e.g. a config built with keyword overrides."""

    cls: ClassInfo
    fields: tuple[tuple[str, Value], ...]
    call: ast.Call | None = None

    def field_value(self, name: str) -> Value | None:
        for key, value in self.fields:
            if key == name:
                return value
        return None


@stored_init
@dataclass(frozen=True)
class DevicesV(Value):
    """`jax.devices()` and arrays made from it: a count, and a shape once reshaped."""

    count: Value
    shape: tuple[int, ...] | None = None
    made_by: MeshConstructor = MeshConstructor.MESH
    """`create_device_mesh` and `reshape` check the device count differently from a plain list."""
    problems: tuple[Problem, ...] = ()
    assumptions: tuple[str, ...] = ()
    """What the shape rests on beyond the code (see `MeshV.assumptions`)."""


@stored_init
@dataclass(frozen=True, eq=False)
class MeshV(Value):
    mesh: Mesh
    span: Span | None = None
    path: str | None = None
    assumptions: tuple[str, ...] = ()
    """What the mesh rests on beyond the code and the user's settings (a size filled from the
    devices because it is not known here, the default device count): its problems, and those of
    every layout on it, are then at most warnings."""
    provenance: tuple[str, ...] = ()
    """How its sizes were read, to show beside it (`8 devices (pragma at line 1)`)."""
    problems: tuple[Problem, ...] = ()
    """What the constructor call itself gets wrong (a literal -1, a float size)."""
    device_count: int | None = None
    """The devices the constructor was given (`jax.devices()[:4]`), when not all of them."""
    count_assumption: str | None = None
    """What that count rests on when it comes from the default device count."""
    runs_elsewhere: bool = False
    """Built in a branch the default device count contradicts (`if jax.device_count() >= 16:`):
    its problems that rest on the count are not this machine's (`device_branches`)."""


@stored_init
@dataclass(frozen=True)
class SpecV(Value):
    spec: PartitionSpec
    unknown_entries: tuple[int, ...] = ()
    """Entries whose value could not be resolved (shown as `?`, never checked)."""
    span: Span | None = field(default=None, compare=False)
    """Where the spec is written (a `P(...)` call or a tuple of names)."""
    entry_spans: tuple[Span | None, ...] = field(default=(), compare=False)
    path: str | None = field(default=None, compare=False)


@stored_init
@dataclass(frozen=True)
class ShardingV(Value):
    """A NamedSharding (mesh known or not) or a bare spec waiting for a context mesh."""

    spec: SpecV
    mesh: MeshV | None = None
    bare: bool = False
    span: Span | None = field(default=None, compare=False)
    """Where the `NamedSharding(...)` call that made it is written (None for a bare spec or a
    sharding shardls made itself): its uses are attributed back to the site of that call."""
    path: str | None = field(default=None, compare=False)


@stored_init
@dataclass(frozen=True)
class TypedArray:
    """What `jax.typeof` says of an array on a mesh with Explicit axes (sharding in types), known
    only when its shape, dtype, spec and mesh all are; and where each mesh axis entered its type."""

    type: ShardedType
    mesh: MeshV
    sources: tuple[tuple[str, str], ...] = ()
    """(mesh axis, where it entered: `device_put at line 4`), for the axes the type names."""
    assumptions: tuple[str, ...] = ()
    """What the type rests on beyond the code (an assumed device count behind the mesh)."""

    def source_of(self, axis: str) -> str | None:
        return next((where for name, where in self.sources if name == axis), None)


@stored_init
@dataclass(frozen=True)
class ArrayV(Value):
    shape: tuple[Value, ...] | None
    dtype: DType | None = None
    sharding: ShardingV | None = None
    placed: bool = False
    """The sharding comes from `device_put`, `with_sharding_constraint` or `reshard`, whose own
    site checks it (not from `out_sharding=` when the array was made)."""
    typed: TypedArray | None = None
    """Its sharded type, when the mesh has Explicit axes and every fact behind it is known."""


@stored_init
@dataclass(frozen=True)
class ArrayTypeV(Value):
    """`type(x)` of a JAX array: `ArrayImpl` run eagerly, a tracer's class under `jit` or a
    transformation. Which one is not known here, only that it is JAX's, never a workspace class."""


@stored_init
@dataclass(frozen=True)
class ModuleNameV(Value):
    """A class's `__module__`, whose text is not known here (it depends on how the program is
    run), only whose module it is: JAX's own (`jax...`/`jaxlib...`, for an array's type) or one
    of the workspace outside any `jax`/`jaxlib` package. Two such names of different owners
    are never equal."""

    jax: bool


@stored_init
@dataclass(frozen=True)
class DTypeV(Value):
    dtype: DType


@stored_init
@dataclass(frozen=True)
class InitializerV(Value):
    """`nnx.with_partitioning(init, spec, mesh=..., sharding_rules=...)`."""

    spec: Value
    mesh: Value | None = None
    rules: Value | None = None
    span: Span | None = field(default=None, compare=False)


@stored_init
@dataclass(frozen=True, eq=False)
class TransformedV(Value):
    """`jax.jit(f, ...)` or `jax.shard_map(f, ...)`: the wrapped function and the call that
    wrapped it, so that calls of the result can be traced back to their shardings."""

    api: str
    """The wrapper's canonical name (`jax.jit`, `jax.shard_map`, ...)."""
    func: Value
    node: ast.Call
    arguments: tuple[tuple[str, Value], ...] = ()
    """The wrapper call's arguments by JAX's parameter names (`in_shardings`, ...), as evaluated
    where it was called."""


Guard = tuple[int, bool]
"""An `if` statement (its node's id within the analysis) and the branch a value comes through."""


def guarded_options(value: Value) -> Iterator[tuple[Value, frozenset[Guard]]]:
    """The options of a value, each with the branches it comes through."""
    if isinstance(value, Choice):
        for index, option in enumerate(value.options):
            outer = value.guards[index] if value.guards else frozenset()
            for inner, guard in guarded_options(option):
                if consistent(outer | guard):
                    yield inner, outer | guard
    else:
        yield value, frozenset()


def consistent(guard: frozenset[Guard]) -> bool:
    """Whether one run can take every branch of `guard` (never both branches of one `if`)."""
    return len(guard) < 2 or len({statement for statement, _ in guard}) == len(guard)


def options(value: Value) -> Iterator[Value]:
    """The concrete alternatives of a value (a Choice flattens to its options)."""
    if isinstance(value, Choice):
        for option in value.options:
            yield from options(option)
    else:
        yield value


def alternatives(values: tuple[Value, ...] | list[Value], limit: int = 8) -> list[tuple[Value, ...]]:
    """Every combination of the values' options (a Choice offers each of its options), at most
    `limit`: both branches of a condition give both layouts, without an explosion."""
    return [combination for combination, _ in guarded_alternatives(values, limit)]


def guarded_alternatives(
    values: tuple[Value, ...] | list[Value], limit: int = 8
) -> list[tuple[tuple[Value, ...], frozenset[Guard]]]:
    """The combinations one run can produce, each with the branches it comes through: options
    set in opposite branches of one `if` are never combined (a shape of the `if` branch with a
    spec of the `else` branch would be a layout no run makes, and a false error)."""
    combinations: list[tuple[tuple[Value, ...], frozenset[Guard]]] = [((), frozenset())]
    for value in values:
        combinations = [
            (combination + (option,), guard | more)
            for combination, guard in combinations
            for option, more in guarded_options(value)
            if consistent(guard | more)
        ][:limit]
    return combinations


def assumption_of(*values: Value | None) -> str | None:
    """What these values rest on, every distinct assumption once, joined (None when all are
    known or stated): `args.n * jax.device_count()` rests on the flag's default and on the default
    device count, and a test of it must not be decided as if only the flag were assumed
    (`known_values.decided`). One already contained in another is not repeated."""
    found = distinct(
        value.origin.assumption
        for value in values
        if value is not None and value.origin is not None and value.origin.assumption is not None
    )
    return "; ".join(found) if found else None


def distinct(notes: Iterable[str]) -> tuple[str, ...]:
    """Each note once, in order, leaving out one that another contains (an assumption joined with
    others by `assumption_of` says all it says)."""
    unique = list(dict.fromkeys(notes))
    return tuple(n for n in unique if not any(n != other and n in other for other in unique))


def as_int(value: Value) -> int | None:
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return value.value
    return None


def as_str(value: Value) -> str | None:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value
    return None


@stored_init
@dataclass(frozen=True, eq=False)
class ParserV(Value):
    """An `argparse.ArgumentParser`; its arguments are read when `parse_args()` is evaluated."""

    scope: Scope
    segment: Segment
    module: ModuleInfo


@stored_init
@dataclass(frozen=True)
class NamespaceV(Value):
    """Attributes by name: the result of `parse_args()` (argparse defaults)."""

    fields: tuple[tuple[str, Value], ...]

    def get(self, name: str) -> Value | None:
        for key, value in self.fields:
            if key == name:
                return value
        return None


@stored_init
@dataclass(frozen=True)
class FileV(Value):
    """A file of known path opened for reading text (`open(path)`, `library/paths.py`), or its
    text (`read=True`: `f.read()`), which a loader of its format reads (`library/yaml_files.py`)."""

    path: str
    read: bool = False


@stored_init
@dataclass(frozen=True)
class PathV(Value):
    """A `pathlib.Path` of known text (`library/paths.py`): what a loader names its config by."""

    path: str
