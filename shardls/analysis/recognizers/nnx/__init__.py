"""Flax NNX layers and variables as sites: one site per annotated parameter.

A parameter's layout is decided when it is created (eager sharding, `flax/core/spmd.py`): its
annotation (`*_init=nnx.with_partitioning(...)`, `*_metadata={'out_sharding': ...}`, or
`nnx.Param(value, out_sharding=...)`) is renamed by the logical axis rules in effect (NNX's dict
semantics, however the rules context is spelled) and laid out on the `mesh=` metadata, else the
`jax.set_mesh` context, or the annotation's own NamedSharding mesh. Explicit-mode initializers
(`partial(init, out_sharding=...)`) create the array sharded without any of that. Layers created
under `nnx.vmap` gain a leading axis (and, with `transform_metadata`, a leading spec entry).

Sites are named after the attribute (`self.up = nnx.Linear(...)` gives `up.kernel`); layers in
a list are `layers[*]` when alike and `layers[0]`, `layers[1]`, ... when their sizes depend on
the loop. Parameters without an annotation get no site: nothing decides their layout.

The modules, by concern:

- `layers`: the parameters each layer creates, one shape formula per layer;
- `annotations`: what Flax reads from a parameter's metadata (`Annotation`);
- `params`: a layer's or variable's parameters with their annotations, as the sites and the
  model-memory report both read them;
- `param_layout`: the mesh and spec Flax lays an annotated parameter out with;
- `stacking`: how `nnx.vmap`/`nnx.scan` stack a parameter's shape and annotation;
- `stacked_bodies`: which function bodies run stacked (a body-contexts provider);
- `instances`: the names of the layers one call creates (`up`, `layers[*]`, `layers[0]`);
- `param_sites`: the recognizers, which turn each annotated parameter into a site.

Registration happens when `param_sites` and `stacked_bodies` are imported (`recognizers.load`).
"""
