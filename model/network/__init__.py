"""The paper's network (Section 3, Appendix A): embeddings, the bidirectional encoder, the alignment models, the decoder, the whole model."""
