from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from edgebench.io import write_text  # noqa: E402
from edgebench.retractions import retracted_figures, scan_for_figures  # noqa: E402

sm = snakemake  # noqa: F821
figures = set()
for path in sm.input.tables:
    figures |= retracted_figures(pd.read_parquet(path))
found = scan_for_figures(Path(sm.params.root), figures)
if found:
    raise SystemExit("retracted figures still written in the repository:\n  " + "\n  ".join(found))
write_text(f"checked {len(figures)} retracted figures: none found in the repository's text\n", sm.output[0])
