"""Every imported family, registered (model/checkpoints/families.py · ``register_family``):
importing this module is what lets ``load_model`` and ``describe_folder`` open Joey NMT, Hugging
Face and tutorial folders. ``Translator`` imports it, and so does everything that opens folders
without one."""
from __future__ import annotations

from model.foreign.hf.family import HF
from model.foreign.joey.family import JOEY
from model.foreign.tutorials.family import TUTORIAL

IMPORTED = (JOEY, HF, TUTORIAL)
