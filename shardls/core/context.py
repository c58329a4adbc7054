"""Where a layout is used. JAX checks the same (mesh, spec, shape) differently at each place
(reference §1.4-1.5), so every computation names its context."""

from __future__ import annotations

import enum


class UsageContext(enum.Enum):
    SHARD_SHAPE = "spec"
    """`NamedSharding(...).shard_shape`, or a spec not yet attached to anything."""
    ABSTRACT = "shape_dtype_struct"
    """`jax.ShapeDtypeStruct(shape, dtype, sharding=...)`: JAX checks the rank (every extra entry,
    None too) but asks for no shard shape, so an uneven dimension is accepted there; the jit,
    `.lower()` or `device_put` given the struct rejects it."""
    DEVICE_PUT = "device_put"
    JIT = "jit"
    """`jax.jit(in_shardings=..., out_shardings=...)`."""
    WSC = "wsc"
    """`with_sharding_constraint` inside `jit`: where uneven shards on Auto axes are padded."""
    WSC_EAGER = "wsc_eager"
    """`with_sharding_constraint` outside `jit`: uneven shards are an error, unless the spec has
    `P.UNCONSTRAINED` (JAX then compiles the constraint itself, which pads as inside jit)."""
    SHARD_MAP = "shard_map"
    PARAM = "param"
    """Flax NNX eager sharding of a parameter."""
    RESHARD = "reshard"
    """`jax.sharding.reshard` and `out_sharding=` (Explicit axes only)."""

    # Members are singletons compared by identity; identity hashing keeps memo keys cheap.
    __hash__ = object.__hash__

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    UsageContext.SHARD_SHAPE: "a PartitionSpec",
    UsageContext.ABSTRACT: "a ShapeDtypeStruct",
    UsageContext.DEVICE_PUT: "device_put",
    UsageContext.JIT: "jit in_shardings/out_shardings",
    UsageContext.WSC: "with_sharding_constraint inside jit",
    UsageContext.WSC_EAGER: "with_sharding_constraint outside jit",
    UsageContext.SHARD_MAP: "shard_map in_specs",
    UsageContext.PARAM: "a Flax NNX parameter",
    UsageContext.RESHARD: "reshard / out_sharding",
}
