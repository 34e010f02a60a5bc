"""``python -m model.train`` (``nmt-train``): train a model (model/training/trainer.py).
"""
from __future__ import annotations

import argparse
from typing import Sequence

from model.argtypes import run_command
from model.core.config import PRESETS, Config, preset
from model.training import trainer
from model.training.settings import apply_config_file, parse_overrides
from model.training.trainer import train


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m model.train", description=trainer.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu", choices=list(PRESETS), help="model and training sizes (default cpu)")
    parser.add_argument("--config", help="JSON file with {model: {...}, train: {...}} on top of the preset")
    parser.add_argument("--set", nargs="*", action="extend", default=[], metavar="KEY=VALUE",
                        help="overrides such as model.arch=rnnencdec train.epochs=10 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT_DIR/last if it exists")
    return parser


def config_from_args(args: argparse.Namespace) -> Config:
    """The preset, then the config file over it, then every ``--set`` in order; validated."""
    cfg = preset(args.preset)
    if args.config:
        cfg = apply_config_file(cfg, args.config)
    cfg = parse_overrides(cfg, args.set)
    cfg.model.validate()
    return cfg


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: f"best checkpoint: {train(config_from_args(args), resume=args.resume)}")


if __name__ == "__main__":
    raise SystemExit(main())
