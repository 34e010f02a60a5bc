"""Hugging Face encoder-decoders: the adapter (``seq2seq.py``) and the family of checkpoint folders
it makes (``family.py``)."""
