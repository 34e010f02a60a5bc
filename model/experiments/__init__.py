"""Experiments a student runs in the Lab: toy tasks made on the fly and RNNencdec and RNNsearch trained on them."""
