"""Builds: the bf16 reference checkpoint and the quantized variants made from it."""
