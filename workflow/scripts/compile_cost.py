from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.compile_cost import compile_cost_row  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
bench, warm = pd.read_parquet(sm.input.cold), pd.read_parquet(sm.input.warm)
section = sm.params.compiled
frame = pd.DataFrame([compile_cost_row(bench, warm, section["eager"], section["compiled"])])
frame["run_id"], frame["git_commit"] = warm["run_id"].iloc[0], warm["git_commit"].iloc[0]
write_parquet(frame, sm.output[0])
print(frame.T.to_string())
