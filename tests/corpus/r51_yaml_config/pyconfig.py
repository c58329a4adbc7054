"""A config loader in the way of MaxText's `pyconfig.initialize(argv, **kwargs)`: argv is
`[program, path_to_base_yml, "key=value", ...]`; a `model_name` selects `models/<name>.yml` beside
the base file, whose keys replace the base file's; `key=value` strings and keyword arguments
replace both, each value read as YAML."""
import os

import yaml

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
CONFIGS_DIR = os.path.join(PKG_DIR, "configs")


def initialize(argv, **kwargs):
    config_path = argv[1]
    with open(config_path) as f:
        raw = yaml.safe_load(f)
    overrides = {}
    for arg in argv[2:]:
        key, value = arg.split("=", 1)
        overrides[key] = yaml.safe_load(value)
    overrides.update(kwargs)  # keyword arguments win over the strings, as in MaxText
    model_name = overrides.get("model_name", raw["model_name"])
    if model_name != "default":
        model_path = os.path.join(os.path.dirname(config_path), "models", f"{model_name}.yml")
        with open(model_path) as f:
            raw.update(yaml.safe_load(f))
    for key, value in overrides.items():
        raw[key] = value
    return raw
