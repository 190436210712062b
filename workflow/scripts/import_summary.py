from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.diagnostics.imports import import_summary  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
frame = import_summary(pd.read_parquet(sm.input.imports), pd.read_parquet(sm.input.bench))
write_parquet(frame, sm.output[0])
print(frame.to_string())
