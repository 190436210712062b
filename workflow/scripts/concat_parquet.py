from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
frames = [pd.read_parquet(p) for p in sm.input]
frame = (
    pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else frames[0]
)
write_parquet(frame, sm.output[0])
print(f"{len(frame)} rows from {len(frames)} files")
