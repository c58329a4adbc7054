"""Settings for the whole suite that keep it deterministic and tidy on a shared CI machine.

Hypothesis is derandomized (its examples follow from each test's source, the same on every
run), keeps no example database, and stores what it still writes (its Unicode table and
constants caches, and the `@example` patches it writes for a failure) in pytest's own cache
directory (`.pytest_cache/d/hypothesis` of the checkout, ignored by git) instead of creating
`.hypothesis/`. Nothing is written outside the checkout but pytest's `tmp_path`.
"""

from __future__ import annotations

import pytest
from hypothesis import configuration, settings

settings.register_profile("shardls", derandomize=True, database=None, print_blob=False)
settings.load_profile("shardls")


def pytest_configure(config: pytest.Config) -> None:
    """Before collection, which already fills Hypothesis's Unicode cache."""
    cache = getattr(config, "cache", None)  # absent under `-p no:cacheprovider`
    home = (
        cache.mkdir("hypothesis") if cache is not None else config.rootpath / ".pytest_cache" / "hypothesis"
    )
    configuration.set_hypothesis_home_dir(home)
