from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.validity import validity_rows  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
warm = pd.read_parquet(sm.input[0])
frame = pd.DataFrame(
    validity_rows(warm, dict(sm.params.calibration), sm.params.gates, dict(sm.params.effects))
)
frame["run_id"], frame["git_commit"] = warm["run_id"].iloc[0], warm["git_commit"].iloc[0]
write_parquet(frame, sm.output[0])
print(frame.T.to_string())
