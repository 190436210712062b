from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.compare import compare_rows, gate_rows  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.metrics import metric  # noqa: E402

sm = snakemake  # noqa: F821
gates = sm.params.gates
tables = {"cold": pd.read_parquet(sm.input.cold), "warm": pd.read_parquet(sm.input.warm)}
compare, gate = [], []
for kind, frame in tables.items():
    names = [name for name in gates["metrics"] if metric(name).measured == kind]
    compare += compare_rows(frame, gates["baseline"], names)
    gate += gate_rows(frame, gates["baseline"], names, gates)
compare, gate = pd.DataFrame(compare), pd.DataFrame(gate)
cold = tables["cold"]
for frame in (compare, gate):
    frame["run_id"], frame["git_commit"] = cold["run_id"].iloc[0], cold["git_commit"].iloc[0]
write_parquet(compare, sm.output.compare)
write_parquet(gate, sm.output.gates)
print(compare.to_string())
print(gate.to_string())
