"""What a server keeps for all its users: offered checkpoints, the decode queue, shared results, hosting rules."""
