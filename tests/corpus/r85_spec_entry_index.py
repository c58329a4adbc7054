"""Real code (maxtext `deepseek_batchsplit.py`, `unroute_ubatch_shard_mapped`): a spec passed as a
parameter and taken apart, `P(activation_pspec[0], None)` for the routed experts' indices and
`P(*activation_pspec[:-1])` for a rank-2 output. An entry read by index is the entry itself (a
tuple of axes here), so the block is split over all of them, not left unsharded.
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 2, 2), ("data", "fsdp", "expert"), axis_types=(AxisType.Auto,) * 3)


def unroute_shard_mapped(moe_inputs, selected_experts, *, mesh, activation_pspec):
    def unroute(tokens, routed):
        return tokens * 2, routed + 1  # expect: tokens, routed

    unrouted, experts = jax.shard_map(  # expect: unrouted, experts
        unroute,
        mesh=mesh,
        in_specs=(activation_pspec, P(activation_pspec[0], None)),
        out_specs=(activation_pspec, P(*activation_pspec[:-1])),
    )(moe_inputs, selected_experts)
    return unrouted, experts


activation_pspec = P(("data", "fsdp", "expert"), None, None)
outputs = unroute_shard_mapped(
    jnp.ones((16, 4, 8)), jnp.zeros((16, 2), jnp.int32), mesh=mesh, activation_pspec=activation_pspec
)
rows = NamedSharding(mesh, P(activation_pspec[-3], activation_pspec[-1]))
last = jax.device_put(jnp.ones((8, 6)), rows)  # expect: last
