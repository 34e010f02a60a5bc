"""Which version of an optional library an import needs is installed, or the install command."""
from __future__ import annotations

import importlib
from importlib import metadata

from model.core.errors import CheckpointError


def installed_version(package: str, install_hint: str) -> str:
    """``package``'s installed version, after importing it (a broken install fails here, not
    halfway through reading a folder); CheckpointError with ``install_hint`` without it."""
    try:
        importlib.import_module(package)
        return metadata.version(package)
    except ImportError:
        raise CheckpointError(install_hint) from None
