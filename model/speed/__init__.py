"""What makes training and decoding fast on a CPU without changing the mathematics: each trick with its measured reason."""
