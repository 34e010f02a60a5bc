"""Which device a decode runs on: the one a model's weights are on, or one a user names.

Search, saliency and the step-by-step quantities build every tensor they hand a model on
``device_of(model)``, read from the model itself (no global default), so a model moved to a GPU
once (``Translator(..., device="cuda")``) decodes there with no other change.
"""
from __future__ import annotations

import itertools

import torch
from torch import nn

from model.core.errors import ConfigError

DEVICE_CHOICES = ("cpu", "cuda", "auto")  # what the command lines offer; "auto": CUDA when there is one


def device_of(model: nn.Module) -> torch.device:
    """The device of ``model``'s first parameter, else of its first buffer; the CPU for a model
    with neither."""
    for tensor in itertools.chain(model.parameters(), model.buffers()):
        return tensor.device
    return torch.device("cpu")


def pick_device(name: str | torch.device) -> torch.device:
    """The device ``name`` means: "auto" is CUDA when this machine has it and the CPU otherwise;
    "cpu", "cuda", "cuda:1", "meta", ... or a ``torch.device`` are that device. ConfigError for a
    name torch does not know, or for CUDA on a machine without it."""
    if isinstance(name, torch.device):
        device = name
    elif name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            device = torch.device(name)
        except (RuntimeError, TypeError):
            raise ConfigError(f"unknown device {str(name)[:40]!r}; choose {', '.join(DEVICE_CHOICES)} "
                              "or a torch device such as cuda:1") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {str(device)!r}: this machine has no CUDA device torch can use; "
                          "choose cpu or auto")
    return device
