"""Analysis settings after merging every source (pragma > command line / editor > config file > default).

Only the merged result lives here; reading `[tool.shardls]` and command-line flags is the job of
`shardls.config`, so the analyzer never touches the file system for settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.core import DType, Mesh

DEFAULT_DEVICE_COUNT = 8
DEFAULT_COUNT_SOURCE = "default device count; set it with # shardls: device-count=N"
"""Where the device count comes from when nobody states it: every assumption resting on it reads
`8 devices (DEFAULT_COUNT_SOURCE)`, which is how a test on it is told from one on a stated count."""


@dataclass(frozen=True)
class Settings:
    device_count: int | None = None
    """None: take it from the file (pragma, XLA_FLAGS hint) or fall back to DEFAULT_DEVICE_COUNT."""
    device_count_source: str = "--device-count"
    default_mesh: Mesh | None = None
    default_mesh_source: str = "default-mesh setting"
    select: frozenset[str] | None = None
    """Rule codes (or prefixes) to report; None means all."""
    ignore: frozenset[str] = frozenset()
    dtype: DType | None = None
    """Default dtype of arrays whose dtype is not written (JAX's default is float32)."""
    x64: bool = False
    hbm_per_device: int | None = None
    optimizer: str | None = None
    """sgd, momentum, adam, adamw or adafactor: its state counts toward `hbm_per_device` (SH213)."""
    bare_noqa: bool = False
    """Whether a bare `# noqa` (no codes) also silences shardls on its line (`bare-noqa`)."""

    def enabled(self, code: str) -> bool:
        if any(code.startswith(prefix) for prefix in self.ignore):
            return False
        return self.select is None or any(code.startswith(prefix) for prefix in self.select)
