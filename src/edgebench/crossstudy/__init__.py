"""Studies compared, not copied: two or more results folders side by side (edgebench compare)."""
