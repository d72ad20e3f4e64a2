# hasseflow-case: n=24 category=script
"""A window read from a config dict with fallbacks by exception type."""
import torch

CONFIG = {"attention": {"window": "wide", "sinks": [0, 1]}}
WIDTHS = {"narrow": 2, "medium": 4}


class ConfigError(ValueError):
    pass


def window_of(cfg):
    name = cfg["attention"]["window"]
    try:
        return WIDTHS[name]
    except KeyError:
        raise ConfigError(f"unknown window {name!r}")


try:
    WINDOW = window_of(CONFIG)
except (TypeError, ConfigError):
    WINDOW = 5
finally:
    SINKS = CONFIG["attention"]["sinks"]

try:
    EXTRA = CONFIG["attention"]["extra_sink"]
except LookupError:
    EXTRA = None
else:
    SINKS = SINKS + [EXTRA]


def mask_mod(b, h, q_idx, kv_idx):
    local = (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)
    sink = kv_idx <= SINKS[-1]
    return local | (sink & (q_idx >= kv_idx))
