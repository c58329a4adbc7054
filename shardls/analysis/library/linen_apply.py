"""`model.apply(variables, *args)` of a Linen module as a value: what its `__call__` returns for
`args` (flax rng_guide.ipynb `module.apply(variables, x, add_noise, rngs={'params': rng})` inside
a jitted or `shard_map`ped `forward`). Layers and parameters inside `__call__` are what
`linen_layers`/`linen` make of them; the variables passed are not read (the parameters' shapes
follow from the module and the input, as when it is initialised).

Only the default method: `method=` applies another one, and `mutable=` returns the changed
collections beside the output, neither of which is followed (the output of `mutable=` is).
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.linen import is_linen_module
from shardls.analysis.library.registry import methods
from shardls.analysis.values import BoundMethod, Const, InstanceV, Seq, Unknown, Value


@methods(InstanceV, "apply")
def _apply(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    module = method.base
    if not is_linen_module(call.evaluator, module, call.frame) or not call.args:
        return None
    if call.kwargs.get("method") not in (None, Const(None)):
        return Unknown("the result of another method of the module")
    kwargs = {
        k: v
        for k, v in call.kwargs.items()
        if k not in ("rngs", "mutable", "method", "capture_intermediates")
    }
    output = call.evaluator.call(module, call.args[1:], kwargs, None, call.frame)
    mutable = call.kwargs.get("mutable")
    if mutable is None or mutable == Const(False):
        return output
    return Seq((output, Unknown("the collections the application changed")))
