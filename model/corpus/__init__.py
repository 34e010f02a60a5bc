"""Text in: corpora and their splits, vocabularies, test sets, licences, the one capped text reader."""
