"""``python -m model.neighbours``: the command line of ``model.decoding.sentence_space``."""

from model.decoding.sentence_space import main

if __name__ == "__main__":
    raise SystemExit(main())
