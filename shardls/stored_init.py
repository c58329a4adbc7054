"""A faster `__init__` for the frozen dataclasses the analysis makes by the hundred thousand.

The `__init__` that `dataclasses` writes for a frozen class sets each field through
`object.__setattr__` (its own `__setattr__` refuses), a call per field: making a `Frame` took
1.1 µs, and frames, values and origins are made for every statement walked and every expression
evaluated (the generated `__init__`s were 6–8 % of the CPU of a check of maxtext or
jax-llm-examples, sampled). `stored_init` replaces it with one that stores each field in the
instance's dict, as `object.__setattr__` would (0.4 µs for a `Frame`), with the same parameters,
defaults and default factories, so that the class, `dataclasses.replace` and everything else see
no difference. It refuses what it does not reproduce: `__slots__`, `__post_init__`, init-only
and non-init fields.
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields, is_dataclass
from types import FunctionType
from typing import Any, TypeVar

T = TypeVar("T")


def stored_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass `cls` an `__init__` that stores its fields in the instance dict
    (decorate above `@dataclass(frozen=True)`)."""
    params = getattr(cls, "__dataclass_params__", None) if is_dataclass(cls) else None
    if params is None or not params.frozen or "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(
            f"{cls.__name__}: stored_init is for frozen dataclasses without slots or __post_init__"
        )
    namespace: dict[str, object] = {"MISSING": MISSING}
    positional: list[str] = []
    keyword: list[str] = []
    body = ["    stored = self.__dict__"]
    dataclass: Any = cls
    for field in fields(dataclass):
        name = field.name
        if field.default is not MISSING:
            namespace[f"default_{name}"] = field.default
            parameter = f"{name}=default_{name}"
            body.append(f"    stored[{name!r}] = {name}")
        elif field.default_factory is not MISSING:
            namespace[f"factory_{name}"] = field.default_factory
            parameter = f"{name}=MISSING"
            body.append(f"    stored[{name!r}] = factory_{name}() if {name} is MISSING else {name}")
        else:
            parameter = name
            body.append(f"    stored[{name!r}] = {name}")
        (keyword if field.kw_only else positional).append(parameter)
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    exec(f"def __init__({signature}):\n" + "\n".join(body), namespace)
    init = namespace["__init__"]
    assert isinstance(init, FunctionType)
    if list(inspect.signature(init).parameters) != list(inspect.signature(cls.__init__).parameters):
        raise TypeError(f"{cls.__name__}: its fields are not its __init__'s parameters (init-only fields?)")
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)  # noqa: B010 (mypy forbids assigning a method)
    return cls
