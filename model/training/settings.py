"""A run's settings from the command line's words: a JSON config file laid over a preset
(``apply_config_file``), then ``section.field=value`` overrides (``parse_overrides``)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from model.checkpoints.folder import read_json
from model.core.config import Config
from model.core.errors import ConfigError


def parse_overrides(cfg: Config, items: Sequence[str]) -> Config:
    """Apply ``section.field=value`` strings (e.g. ``train.epochs=3``) to ``cfg``."""
    data = cfg.to_dict()
    for item in items:
        key, sep, value = item.partition("=")
        section, _, name = key.partition(".")
        if not sep or section not in data or name not in data[section]:
            raise ConfigError(f"bad override {item!r}: use section.field=value with section model or train")
        data[section][name] = value
    return Config.from_dict(data)


def apply_config_file(cfg: Config, path: str | Path) -> Config:
    """``cfg`` with the sections of a JSON config file laid over it, field by field.

    Raises CheckpointError (missing, not JSON, not an object) or ConfigError naming the file.
    """
    data = read_json(Path(path))
    base = cfg.to_dict()
    unknown = sorted(set(data) - set(base))
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {', '.join(map(repr, unknown))}; "
                         f"use {' and '.join(base)}")
    for section, values in data.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: section {section!r} must be a JSON object, got {type(values).__name__}")
        base[section].update(values)
    try:
        return Config.from_dict(base)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
