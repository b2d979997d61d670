"""Hidden PyTorch references for the inside-the-block problem set, one module per lesson concept."""
