from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
frames = [pd.read_parquet(p) for p in sm.input]
frame = (
    pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else frames[0]
)
write_parquet_atomic(frame, sm.output[0])
print(f"{len(frame)} rows from {len(frames)} files")
