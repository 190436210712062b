"""edgebench: honest CPU edge benchmarks of small quantized LLMs."""

__version__ = "0.1.0"
