from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.compare import compare_rows, gate_rows  # noqa: E402
from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
gates = sm.params.gates
bench = pd.read_parquet(sm.input[0])
compare = pd.DataFrame(compare_rows(bench, gates["baseline"], gates["metrics"], gates["bootstrap_resamples"]))
gate = pd.DataFrame(gate_rows(bench, gates["baseline"], gates["metrics"], gates["max_spread"]))
for frame in (compare, gate):
    frame["run_id"], frame["git_commit"] = bench["run_id"].iloc[0], bench["git_commit"].iloc[0]
write_parquet_atomic(compare, sm.output.compare)
write_parquet_atomic(gate, sm.output.gates)
print(compare.to_string())
print(gate.to_string())
