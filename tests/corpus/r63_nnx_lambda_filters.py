"""r63: Flax NNX filters written as functions of a variable's path and the variable (flax
tests/nnx/transforms_test.py `filter_0 = lambda path, var: ...` given to `nnx.prefix`, tunix's
`nnx.All(nnx.Param, lambda path, x: 'output' not in path)`, flax's NNX guides). Flax calls the
function with the path (a tuple of keys) and the variable; shardls evaluates its body with them:
names in the path, `path[-1]`, `isinstance(x, nnx.BatchStat)`, a `def` taking both, and the
lambda a function returns (flax's `path_ends_with(('linear1', 'kernel'))`, a tuple compared).
"""

import jax
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Auto))


def sharding(*names):
    return NamedSharding(mesh, P(*names))


is_bias = lambda path, x: path[-1] == "bias"  # noqa: E731
by_lambda = nnx.StateSharding(
    {
        lambda path, x: "kernel" in path: sharding("a", "b"),
        is_bias: sharding("b"),
    }
)
model = nnx.Linear(16, 32, rngs=nnx.Rngs(0))


@nnx.jit(in_shardings=(by_lambda,))
def constrain(m):
    pass


constrain(model)  # expect: model


def is_stat(path, x):
    return isinstance(x, nnx.BatchStat)


norm = nnx.BatchNorm(8, rngs=nnx.Rngs(1))
by_kind = nnx.StateSharding(
    {
        is_stat: sharding("b"),
        nnx.All(nnx.Param, lambda path, x: "scale" in path): sharding("a"),
        ...: sharding(),
    }
)


@nnx.jit(in_shardings=(by_kind,))
def touch(n):
    pass


touch(norm)  # expect: norm


template = nnx.Linear(8, 16, rngs=nnx.Rngs(2))
filter_0 = lambda path, var: path[0] == "kernel"  # noqa: E731
made_prefix = nnx.prefix(template, {filter_0: sharding(None, "b"), ...: sharding()})


@nnx.jit(out_shardings=made_prefix, graph=True, graph_updates=False)
def make():
    return nnx.Linear(8, 16, rngs=nnx.Rngs(3))


made = make()  # expect: made


def path_ends_with(path_suffix):
    return lambda path, value: path[-len(path_suffix) :] == path_suffix


suffixed = nnx.Linear(8, 32, rngs=nnx.Rngs(4))
by_suffix = nnx.StateSharding({path_ends_with(("kernel",)): sharding(None, "b"), ...: sharding()})


@nnx.jit(in_shardings=(by_suffix,))
def visit(m):
    pass


visit(suffixed)  # expect: suffixed
