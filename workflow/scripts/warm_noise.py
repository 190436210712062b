from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.noise import noise_table  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
frame = noise_table(pd.read_parquet(sm.input[0]), sm.params.baseline)
write_parquet(frame, sm.output[0])
print(frame.to_string())
