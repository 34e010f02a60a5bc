"""Scores: BLEU and friends, evaluation reports, word alignments and how well attention aligns."""
