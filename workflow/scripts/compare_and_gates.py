from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.compare import compare_tables  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
compare, gate = compare_tables(
    pd.read_parquet(sm.input.cold), pd.read_parquet(sm.input.warm), sm.params.gates
)
write_parquet(compare, sm.output.compare)
write_parquet(gate, sm.output.gates)
print(compare.to_string())
print(gate.to_string())
