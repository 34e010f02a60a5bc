"""What production mode (a server other people can reach) refuses or keeps to itself.

A teacher runs one server for a class: a remote user must not make it load or probe folders
outside the checkpoint root, and error messages must not tell them which server paths exist.
"""
from __future__ import annotations

import ipaddress
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Optional

from model.core.errors import UserError
from model.experiments import lab_checkpoint
from viz import i18n
from viz.serving.settings import AppSettings
from viz.i18n import N_, _

# Longest checkpoint name or path accepted, in characters, and longest part of it in UTF-8
# bytes (NAME_MAX on Linux/macOS; a longer part makes every file call raise OSError).
MAX_NAME_CHARS, MAX_PART_BYTES = 1024, 255
OUTSIDE_ROOT = N_("Only checkpoints inside the server's checkpoint folder can be used.")
BAD_NAME = N_("That is not a usable checkpoint name or path.")


LAB_PREFIX = "lab/"  # "lab/<experiment key>/<architecture>": a model the Lab trained on this server
_LAB_NAME = re.compile(r"lab/([0-9a-f]{16})/(rnnsearch|rnnencdec|transformer)")


def lab_root(settings: AppSettings) -> Path:
    """Where this server keeps the models its Lab trained: under the cache folder, else the
    system's temporary folder (one per process)."""
    if settings.cache_dir is not None:
        return settings.cache_dir / "lab"
    return Path(tempfile.gettempdir()) / f"inside-attention-nmt-lab-{os.getpid()}"


def _lab_folder(name: str, settings: AppSettings) -> Path:
    """The folder of a Lab model's name; only the exact form, so no name leaves the Lab's folder."""
    found = _LAB_NAME.fullmatch(name)
    if found is None:
        raise CheckpointNameError(BAD_NAME)
    lab_checkpoint.register()  # such a folder says "family": "lab"
    return lab_root(settings) / found.group(1) / found.group(2)


class CheckpointNameError(UserError):
    """A checkpoint name refused before anything was loaded. The message is fixed (one of the
    catalog's English messages, which ``i18n.error_text`` shows in the reader's
    language): it never repeats the name or any server path."""


def production(settings: AppSettings) -> bool:
    """True when the app may serve people other than whoever started it: ``app.py --production``,
    or Streamlit's ``server.address`` set to an address that is not loopback
    (``--server.address 0.0.0.0``).

    Streamlit also listens on every interface when server.address is left unset, which cannot be
    told apart from a local run: start a server that others can reach with --production.
    """
    address = settings.server_address
    return settings.production or (bool(address) and not _is_loopback(address))


def _is_loopback(address: str) -> bool:
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:  # a host name or a unix socket: assume others can reach it
        return False


def resolve_checkpoint(name: str, settings: AppSettings) -> Path:
    """The folder that ``name`` (as listed, or typed on the Evaluate page) stands for, under the
    checkpoint root ``settings.checkpoints``.

    Locally: a folder under the root, or any path (``~`` expanded), so users can point at their
    own runs. In production mode only a folder strictly inside the root, after resolving ``..``
    and symlinks, so a remote user cannot make the server load or probe anything else. Empty,
    over-long or non-printable names (NUL bytes, lone surrogates) are always refused.
    Raises CheckpointNameError.
    """
    if (not name or len(name) > MAX_NAME_CHARS or not name.isprintable()
            or any(len(part.encode()) > MAX_PART_BYTES for part in Path(name).parts)):
        raise CheckpointNameError(BAD_NAME)
    if name.startswith(LAB_PREFIX):
        return _lab_folder(name, settings)
    root = settings.checkpoints
    try:
        if not production(settings):
            return root / Path(name).expanduser()
        real_root, path = root.resolve(), (root / name).resolve()
        inside = real_root in path.parents and path.is_dir()
    except (OSError, RuntimeError):  # no home folder, a symlink loop
        raise CheckpointNameError(BAD_NAME) from None
    if not inside:
        raise CheckpointNameError(OUTSIDE_ROOT)
    return path


def error_text(exc: Exception, settings: AppSettings, public: str, local: Optional[str] = None) -> str:
    """What a page shows for ``exc``: ``local`` (default: the exception's text) when run locally;
    in production mode ``public``, which must name no server path, while the details go to the
    server's log."""
    if not production(settings):
        return i18n.error_text(exc) if local is None else local
    print(f"{public} ({type(exc).__name__}: {str(exc)[:500]!r})", file=sys.stderr, flush=True)
    return public


def no_checkpoints_text(settings: AppSettings, hint: str = "") -> str:
    """The error for an empty checkpoint root; the root's path and ``hint`` only locally."""
    if production(settings):
        return _("No checkpoints are installed on this server.")
    text = _("No checkpoints found in {root}.").format(root=i18n.ltr(str(settings.checkpoints)))
    return f"{text} {hint}" if hint else text
