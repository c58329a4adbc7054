"""r61: sharding helpers defined in one module of a package, called from another (issue #12 §2)."""

from .sharding_utils import put
