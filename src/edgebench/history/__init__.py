"""A study's summaries over time: a history store per machine, and change points found in it."""
