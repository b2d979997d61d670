"""Hidden PyTorch references for the transformer-block problem set, one module per lesson concept."""
