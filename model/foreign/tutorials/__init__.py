"""The models students train in the PyTorch, bentrevett and d2l tutorials: the three tutorials' networks, the
table that reads them (``tutorials.py``) and the family of checkpoint folders they make (``family.py``)."""
