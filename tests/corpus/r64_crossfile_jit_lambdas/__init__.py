"""r64: jitted functions, lambda helpers and helper classes of one module of a package, called from another (issue #12 §2)."""
