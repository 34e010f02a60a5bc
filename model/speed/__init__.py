"""What makes training fast on a CPU without changing the mathematics: each trick with its measured reason."""
