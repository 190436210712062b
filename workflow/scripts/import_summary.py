from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.diagnostics.imports import import_summary  # noqa: E402
from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
frame = import_summary(pd.read_parquet(sm.input.imports), pd.read_parquet(sm.input.bench))
write_parquet_atomic(frame, sm.output[0])
print(frame.to_string())
