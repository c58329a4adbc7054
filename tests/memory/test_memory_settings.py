"""The `optimizer` setting and SH213 through `shardls check` (the analyzer), with the config file."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import run

from shardls.config import ConfigError, load_config

OVERSIZED = """\
from flax import nnx


class Big(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.embed = nnx.Embed(1_000_000, 1024, rngs=rngs)


big = Big(nnx.Rngs(0))
"""
"""3.8 GiB of float32 on one device."""


def test_optimizer_key_is_read_and_checked(tmp_path: Path) -> None:
    config = tmp_path / "shardls.toml"
    config.write_text('optimizer = "adafactor"\n')
    assert load_config(config).layer.optimizer == "adafactor"
    config.write_text('optimizer = "lion"\n')
    with pytest.raises(ConfigError, match="optimizer: expected one of sgd, momentum, adam, adamw, adafactor"):
        load_config(config)


def test_check_reports_sh213_only_over_the_configured_hbm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "big.py"
    model.write_text(OVERSIZED)
    (tmp_path / "shardls.toml").write_text('hbm-per-device = "8GiB"\n')
    assert "SH213" not in run(capsys, "check", str(model)).out

    (tmp_path / "shardls.toml").write_text('hbm-per-device = "8GiB"\noptimizer = "adam"\n')
    result = run(capsys, "check", str(model))
    assert "SH213" in result.out
    assert "big.py:9:7" in result.out
    assert "parameters + adam state" in result.out
