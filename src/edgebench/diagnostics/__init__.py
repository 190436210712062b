"""Where time and memory go: import cost, the memory ledger, and the int4 kernel study."""
