"""The Paper page's equation table names real functions, and they are the ones a decode calls."""
import importlib
import sys

import pytest
import torch

from model.checkpoints.folder import load_checkpoint
from model.decoding.step_by_step import dissect
from viz.pages.parts.paper_equations import EQUATIONS

NAMED = sorted({ref for eq in EQUATIONS.values() for ref in eq.computed_by})


def resolve(module: str, qualname: str):
    """(owner, attribute name, the function) for ``module.qualname``."""
    owner = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, getattr(owner, name)


@pytest.mark.parametrize("module, qualname", NAMED, ids=[f"{m}.{q}" for m, q in NAMED])
def test_every_named_function_exists(module, qualname):
    assert callable(resolve(module, qualname)[2])


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_following_a_decode_calls_every_function_its_equations_name(tiny_checkpoints, monkeypatch, arch):
    """Each named function is wrapped where it is defined and wherever a module imported it by
    name; following one decode step by step must call every one the model's equations use."""
    calls = {}
    for module, qualname in NAMED:
        owner, name, function = resolve(module, qualname)

        def counted(*args, _key=(module, qualname), _function=function, **kwargs):
            calls[_key] = calls.get(_key, 0) + 1
            return _function(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
        for loaded in [m for k, m in sys.modules.items() if k.startswith("model.")]:
            if getattr(loaded, name, None) is function:  # `from .gru import gru_update` and the like
                monkeypatch.setattr(loaded, name, counted)
    model, src_vocab, _, _ = load_checkpoint(tiny_checkpoints[arch])
    torch.manual_seed(0)
    dissect(model, src_vocab.encode("a dog runs"), [5, 6, 3])
    used = {ref for key, eq in EQUATIONS.items() for ref in eq.computed_by
            if arch == "rnnsearch" or key not in ("e", "alpha")}  # RNNencdec has no alignment model
    assert {ref for ref in used if not calls.get(ref)} == set()
