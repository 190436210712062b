from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.diagnostics.omp_regions import omp_rows  # noqa: E402
from edgebench.diagnostics.stamp import stamp  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
rows = omp_rows(sm.params.config["diagnostics"]["omp_threads"], pd.read_parquet(sm.input.profile))
frame = stamp(pd.DataFrame(rows).assign(status="ok", error=""), sm.params.config, sm.params.code)
write_parquet(frame, sm.output[0])
print(frame[["threads", "wait_policy", "region_us", "regions_per_step", "share"]].to_string())
