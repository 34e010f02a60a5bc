"""Joey NMT 2.x models: the adapters (``joey.py``: recurrent, ``transformer.py``) and the family of
checkpoint folders they make (``family.py``)."""
