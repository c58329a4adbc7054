"""A plain module (not a package's `__init__`) that only re-exports a helper."""

from .impl import put  # noqa: F401
