"""Seven sharding mistakes, each one something JAX rejects (or deprecates), with the fix in a comment.

Open this file with shardls to see every mistake underlined before anything runs; the trailing
`# expect-error: SHxxx` comments name the rule shardls reports there. Run it with
`python examples/mistakes.py` to see JAX's own message for each one: every mistake sits in a
`jax_rejects(...)` block, which prints the error and fails loudly if JAX ever accepts the code.
"""

import contextlib
import os
import traceback
import warnings
from collections.abc import Iterator

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


@contextlib.contextmanager
def jax_rejects(mistake: str) -> Iterator[None]:
    """Run the block, which must raise; print the line it raised from and JAX's message."""
    try:
        yield
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == __file__]
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        print(f"line {frames[-1].lineno}: {mistake}\n    JAX: {type(error).__name__}: {first_line[:160]}")
    else:
        raise AssertionError(f"JAX accepted {mistake}")


@contextlib.contextmanager
def jax_deprecates(mistake: str) -> Iterator[None]:
    """Run the block, which must emit a DeprecationWarning; print the line it points at and the warning."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
    deprecations = [w for w in seen if issubclass(w.category, DeprecationWarning) and w.filename == __file__]
    if not deprecations:
        raise AssertionError(f"JAX did not deprecate {mistake}")
    print(f"line {deprecations[0].lineno} (warning): {mistake}\n    JAX: {deprecations[0].message}")


mesh = jax.make_mesh((2, 4), ("data", "model"))  # 8 devices: data=2 x model=4
x = jnp.zeros((16, 64))

# 1. GPT-2's vocabulary has 50257 tokens, and 50257 is odd: it cannot be split over 8 devices.
#    Fix: pad the vocabulary to a multiple of the split (50264 = 8 * 6283), or shard the other dim.
with jax_rejects("an indivisible vocabulary (50257 over 8 devices)"):
    embedding = jax.device_put(
        jnp.zeros((50257, 64)), NamedSharding(mesh, P(("data", "model"), None))
    )  # expect-error: SH001

# 2. A typo in an axis name: the mesh has 'model', not 'modle'.
with jax_rejects("a typo'd mesh axis 'modle'"):
    weights = jax.device_put(x, NamedSharding(mesh, P("data", "modle")))  # expect-error: SH005

# 3. One mesh axis may shard at most one dimension. Fix: P('data', 'model') or P(('data', 'model')).
with jax_rejects("a duplicate axis 'data'"):
    tiles = jax.device_put(x, NamedSharding(mesh, P("data", "data")))  # expect-error: SH004

# 4. A scalar has no dimension to leave unsharded: P(None) has one entry too many. Fix: P().
with jax_rejects("P(None) on a scalar"):
    loss = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P(None)))  # expect-error: SH003

# 5. A bare PartitionSpec does not say which mesh it means. Fix: NamedSharding(mesh, P('data')), or
#    run the code inside `with jax.set_mesh(mesh):`.
with jax_rejects("a bare P in device_put without jax.set_mesh"):
    batch = jax.device_put(x, P("data"))  # expect-error: SH202

# 6. `with mesh:` is the deprecated spelling of `with jax.set_mesh(mesh):`. It still serves
#    with_sharding_constraint, but a bare P in device_put fails under it just as with no mesh at all.
auto_mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
with jax_deprecates("the legacy `with mesh:` context"), auto_mesh:  # expect-warning: SH203
    constrained = jax.lax.with_sharding_constraint(x, P("data", "model"))
    with jax_rejects("a bare P in device_put under `with mesh:`"):
        batch = jax.device_put(x, P("data"))  # expect-error: SH202

# 7. A 4 x 4 mesh needs 16 devices; this machine has 8. Fix: make the sizes multiply to the device
#    count (jax.device_count()), e.g. (2, 4).
with jax_rejects("a mesh larger than the device count"):
    big_mesh = jax.make_mesh((4, 4), ("data", "model"))  # expect-error: SH104
