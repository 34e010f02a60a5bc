"""The table of this project's architectures: which class builds a ``ModelConfig.arch``."""
from __future__ import annotations

from typing import Union

from model.core.config import ModelConfig
from model.network.nmt_model import NMTModel
from model.network.transformer import TransformerModel

OwnModel = Union[NMTModel, TransformerModel]


def build_model(config: ModelConfig, initialise: bool = True) -> OwnModel:
    """The model ``config`` describes: RNNsearch or RNNencdec (``NMTModel``, Bahdanau et al.
    2015) or the Transformer (``TransformerModel``, Vaswani et al. 2017). ``initialise=False``
    leaves the weights unset, for a checkpoint about to replace them."""
    config.validate()
    if config.arch == "transformer":
        return TransformerModel(config, initialise)
    return NMTModel(config, initialise)
