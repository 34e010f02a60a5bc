"""Training: the loop, many processes under torchrun, and the training replay."""
