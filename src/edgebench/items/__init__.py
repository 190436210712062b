"""Roadmap items as targets: load and validate them, verify each claim, write its verdict."""
