from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.diagnostics.imports import import_rows  # noqa: E402
from edgebench.diagnostics.stamp import stamp  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
imports = sm.params.imports
frame = stamp(
    pd.DataFrame(import_rows(imports["entries"], imports["reps"])), sm.params.config, sm.params.code
)
write_parquet(frame, sm.output[0])
totals = frame[frame["module"] == "(total)"].groupby("entry")[["cumulative_s", "process_wall_s"]].median()
print(totals.to_string())
