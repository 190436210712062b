"""One Engine protocol, one implementation per engine, one registry (edgebench.engines.registry)."""

from __future__ import annotations

from edgebench.engines.registry import make_engine

__all__ = ["make_engine"]
