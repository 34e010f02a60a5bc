"""The viz command lines, one module per command, each installed as ``nmt-...``."""
