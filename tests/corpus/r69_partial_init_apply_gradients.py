"""r69: flax's `flax_on_pjit` guide (docs/guides/parallel_training/flax_on_pjit.ipynb). The state's
shardings come from `jax.eval_shape(functools.partial(init_fn, model=model, optimizer=optimizer),
k, x)`, a partial of a function of the program called with the rest of its arguments, then
`nn.get_sharding`; `jax.jit(init_fn, out_shardings=state_sharding)` builds the state so, and the
training step `state.apply_gradients(grads=grads)` gives a state of the same parameter shapes and
dtypes, which its `out_shardings=state_sharding` lay out again (the optimizer's state is not
modelled by shardls, and stays unknown). The parameters are boxed (`nn.Partitioned`), which the
tags here cannot name: `test_train_state.py` checks their layouts against the figures the
asserts below (and the guide under JAX) give.
"""

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


class DotReluDot(nn.Module):
    depth: int

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(
            self.depth, kernel_init=nn.with_partitioning(nn.initializers.xavier_normal(), (None, "model"))
        )(x)
        y = jax.nn.relu(y)
        w2 = self.param(
            "W2",
            nn.with_partitioning(nn.initializers.xavier_normal(), ("model", None)),
            (self.depth, x.shape[-1]),
        )
        return jnp.dot(y, w2)


def init_fn(k, x, model, optimizer):
    variables = model.init(k, x)
    return train_state.TrainState.create(apply_fn=model.apply, params=variables["params"], tx=optimizer)


model = DotReluDot(32)
optimizer = optax.adam(learning_rate=0.001)
k = jax.random.key(0)
x = jnp.ones((8, 16))
abstract_variables = jax.eval_shape(functools.partial(init_fn, model=model, optimizer=optimizer), k, x)
state_sharding = nn.get_sharding(abstract_variables, mesh)
x_sharding = NamedSharding(mesh, P("data", None))

jit_init_fn = jax.jit(
    init_fn,
    static_argnums=(2, 3),
    in_shardings=(NamedSharding(mesh, P()), x_sharding),
    out_shardings=state_sharding,
)
initialized_state = jit_init_fn(k, x, model, optimizer)


@functools.partial(jax.jit, in_shardings=(state_sharding, x_sharding), out_shardings=state_sharding)
def train_step(state, x):
    def loss_unrolled(params):
        return model.apply({"params": params}, x).sum()

    grads = jax.grad(loss_unrolled)(state.params)
    return state.apply_gradients(grads=grads)


with jax.set_mesh(mesh):
    new_state = train_step(initialized_state, x)  # expect: new_state.step
assert new_state.params["Dense_0"]["kernel"].value.addressable_shards[0].data.shape == (16, 8)
assert new_state.params["W2"].value.addressable_shards[0].data.shape == (8, 16)
