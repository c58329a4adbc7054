"""FSDP + tensor parallelism for a small MLP language model, driven by one config dataclass.

The mesh has an `fsdp` axis and a `tp` axis. Every weight is split over both:

* `fsdp` splits the dimension that is *not* used for tensor parallelism, so each device stores only
  a slice of every weight (fully sharded data parallelism); XLA gathers it when it is needed;
* `tp` splits the hidden features of the MLP (Megatron style) and the vocabulary of the embedding.

The batch is split over `fsdp` (`P('fsdp', None)`): the 2 devices of a `tp` group work on the same
examples, each with its half of the hidden features.
`jax.jit` pins the layouts: `in_shardings` and `out_shardings` say where parameters, batches and
the loss live, so the updated parameters come back with exactly the layout they went in with.

Run it with `python examples/fsdp_tp_training.py` (it fakes 8 CPU devices).
"""

import dataclasses
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    vocab: int = 512
    d_model: int = 128
    d_ff: int = 512
    seq_len: int = 16
    global_batch: int = 32
    fsdp: int = 4
    tp: int = 2
    learning_rate: float = 20.0
    steps: int = 5

    @classmethod
    def debug(cls) -> "TrainConfig":
        """A smaller preset for quick runs."""
        return cls(vocab=256, d_model=64, d_ff=256, global_batch=16)


cfg = TrainConfig.debug()
mesh = Mesh(np.array(jax.devices()).reshape(cfg.fsdp, cfg.tp), ("fsdp", "tp"))

# One spec per parameter; the dict mirrors the parameter tree.
PARAM_SPECS = {
    "embed": P("tp", "fsdp"),  # (vocab, d_model)
    "w_in": P("fsdp", "tp"),  # (d_model, d_ff)
    "w_out": P("tp", "fsdp"),  # (d_ff, d_model)
}
param_shardings = {name: NamedSharding(mesh, spec) for name, spec in PARAM_SPECS.items()}
batch_sharding = NamedSharding(mesh, P("fsdp", None))  # (global_batch, seq_len)
replicated = NamedSharding(mesh, P())


def init_params(key: jax.Array) -> dict[str, jax.Array]:
    k_embed, k_in, k_out = jax.random.split(key, 3)
    return {
        "embed": jax.random.normal(k_embed, (cfg.vocab, cfg.d_model)) / np.sqrt(cfg.d_model),
        "w_in": jax.random.normal(k_in, (cfg.d_model, cfg.d_ff)) / np.sqrt(cfg.d_model),
        "w_out": jax.random.normal(k_out, (cfg.d_ff, cfg.d_model)) / np.sqrt(cfg.d_ff),
    }


def loss_fn(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    """Next-token prediction through one MLP block, with the embedding tied to the output layer."""
    # A one-hot matmul instead of a gather: XLA shards a dot over the split vocabulary cleanly.
    x = jax.nn.one_hot(tokens[:, :-1], cfg.vocab) @ params["embed"]
    x = x + jax.nn.gelu(x @ params["w_in"]) @ params["w_out"]
    logits = x @ params["embed"].T
    targets = tokens[:, 1:]
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], axis=-1))


def train_step(params: dict[str, jax.Array], tokens: jax.Array) -> tuple[dict[str, jax.Array], jax.Array]:
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    params = jax.tree.map(lambda p, g: p - cfg.learning_rate * g, params, grads)
    return params, loss


# Parameters are created directly in their sharded layout: no device ever holds a full copy.
init = jax.jit(init_params, out_shardings=param_shardings)
step = jax.jit(
    train_step,
    in_shardings=(param_shardings, batch_sharding),
    out_shardings=(param_shardings, replicated),
    donate_argnums=0,
)


def main() -> None:
    params = init(jax.random.key(0))
    key = jax.random.key(1)
    losses = []
    for _ in range(cfg.steps):
        key, data_key = jax.random.split(key)
        # A learnable toy task: each sequence counts up from a random token (next = current + 1).
        starts = jax.random.randint(data_key, (cfg.global_batch, 1), 0, cfg.vocab)
        batch = (starts + jnp.arange(cfg.seq_len)) % cfg.vocab
        tokens = jax.device_put(batch, batch_sharding)
        params, loss = step(params, tokens)
        losses.append(float(loss))
    for name, value in params.items():
        print(f"{name:6} global {value.shape} per device {value.sharding.shard_shape(value.shape)}")
    print("losses", [round(v, 4) for v in losses])
    assert params["w_in"].sharding.shard_shape(params["w_in"].shape) == (
        cfg.d_model // cfg.fsdp,
        cfg.d_ff // cfg.tp,
    )
    assert losses[-1] < losses[0]


if __name__ == "__main__":
    main()
