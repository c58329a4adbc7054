"""Build a model abstractly under an `AbstractMesh` and read every parameter's shape, dtype and
sharding, as `nnx.eval_shape` and the values' shardings (or `nnx.get_partition_spec`) report them.

Nothing is allocated: `nnx.eval_shape` traces the factory, and `use_abstract_mesh` gives Flax a
mesh to shard onto without any device (reference §4.6).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from shardls.core import Mesh, PartitionSpec, parse_dtype
from shardls.memory.figures import mesh_label
from shardls.memory.model import ModelMemory, ParamMemory

INSTALL_HINT = "exact mode needs JAX and Flax: pip install 'shardls[exact]'"


class ExactUnavailable(Exception):
    """Exact mode cannot run: JAX/Flax missing, or the factory cannot be imported or called."""


LogicalRules = str | tuple[tuple[str, object], ...]
"""The module attribute holding the rules (`RULES`), or the rules themselves as Flax takes them."""


def exact_model(
    target: str, mesh: Mesh | None, rules: LogicalRules | None = None, search_path: Path | None = None
) -> ModelMemory:
    """Call `package.module:factory` under `mesh` (abstractly) and describe the model it returns.

    `rules`: the logical axis rules. `nnx.eval_shape` turns annotations into shardings after the
    factory returns, outside any rules context the factory entered, so logical names need the
    rules in effect around the whole call (as a training script has them around
    `nnx.get_partition_spec`)."""
    jax, nnx = _jax_and_flax()
    module, factory = _factory(target, search_path)
    with contextlib.ExitStack() as stack:
        abstract = None
        if mesh is not None:
            types = (jax.sharding.AxisType.Auto,) * len(mesh.axis_names)
            abstract = jax.sharding.AbstractMesh(
                tuple(mesh.axis_sizes), tuple(mesh.axis_names), axis_types=types
            )
            stack.enter_context(jax.sharding.use_abstract_mesh(abstract))
        if isinstance(rules, str):
            if not hasattr(module, rules):
                raise ExactUnavailable(f"{module.__name__} has no {rules} (the logical axis rules)")
            stack.enter_context(nnx.logical_axis_rules(getattr(module, rules)))
        elif rules is not None:
            stack.enter_context(nnx.logical_axis_rules(rules))
        try:
            model = nnx.eval_shape(factory)
        except Exception as error:  # the user's factory may raise anything
            raise ExactUnavailable(
                f"{target} failed under nnx.eval_shape: {type(error).__name__}: {error}"
            ) from None
        params = _params(jax, nnx, model, abstract)
    code = getattr(factory, "__code__", None)
    name = type(model).__name__
    return ModelMemory(
        name,
        name,
        getattr(module, "__file__", None) or target,
        code.co_firstlineno - 1 if code is not None else 0,
        params,
        mesh_label(mesh),
        ("exact: nnx.eval_shape under an AbstractMesh",),
    )


def _params(jax: Any, nnx: Any, model: Any, abstract: Any) -> tuple[ParamMemory, ...]:
    """Each parameter's shape, dtype and sharding as JAX has them, laid out by JAX itself."""
    state = nnx.state(model, nnx.Param)
    specs = dict(nnx.to_flat_state(nnx.get_partition_spec(state)))
    params = []
    for key, variable in nnx.to_flat_state(state):
        value = variable.get_value()
        spec = _spec_of(value, specs.get(key))
        shape = tuple(int(d) for d in value.shape)
        shard = (
            shape
            if abstract is None
            else tuple(jax.sharding.NamedSharding(abstract, spec).shard_shape(shape))
        )
        path = _path_text(key)
        params.append(ParamMemory(path, shape, parse_dtype(str(value.dtype)), _core_spec(spec), shard))
    return tuple(params)


def _jax_and_flax() -> tuple[Any, Any]:
    try:
        import jax
        from flax import nnx
    except ImportError as error:
        raise ExactUnavailable(f"{INSTALL_HINT} ({error})") from None
    return jax, nnx


def _factory(target: str, search_path: Path | None) -> tuple[ModuleType, Callable[[], Any]]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ExactUnavailable(f"expected package.module:factory, got {target!r}")
    folder = str(search_path or Path.cwd())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # the user's module may raise anything while importing
        raise ExactUnavailable(f"cannot import {module_name}: {type(error).__name__}: {error}") from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ExactUnavailable(f"{module_name} has no callable {attribute}")
    return module, factory


def _spec_of(value: Any, metadata_spec: Any) -> Any:
    """The sharding Flax gave the value at creation; `get_partition_spec` when it has none."""
    from jax.sharding import NamedSharding, PartitionSpec

    sharding = getattr(value, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec
    return metadata_spec if metadata_spec is not None else PartitionSpec()  # type: ignore[no-untyped-call]


def _core_spec(spec: Any) -> PartitionSpec | None:
    entries = tuple(spec)
    if not entries:
        return None
    return PartitionSpec.of(*(e if e is None or isinstance(e, str) else tuple(e) for e in entries))


def _path_text(key: tuple[Any, ...]) -> str:
    """`('layers', 0, 'mlp', 'up', 'kernel')` -> `layers[0].mlp.up.kernel`, as the static report writes it."""
    text = ""
    for part in key:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
