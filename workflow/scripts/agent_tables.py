from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.agent.tables import summary_rows, throughput_rows  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.retractions import apply_retractions  # noqa: E402

sm = snakemake  # noqa: F821
trials = pd.concat([pd.read_parquet(p) for p in sm.input], ignore_index=True)
trials = apply_retractions(trials, "agent_trials", sm.params.retractions)
summary = pd.DataFrame(summary_rows(trials, sm.params.reference))
throughput = pd.DataFrame(throughput_rows(trials) or {"arm": [], "model": []})
for frame in (summary, throughput):
    frame["run_id"], frame["git_commit"] = trials["run_id"].iloc[0], trials["git_commit"].iloc[0]
write_parquet(trials, sm.output.trials)
write_parquet(summary, sm.output.summary)
write_parquet(throughput, sm.output.throughput)
print(summary.to_string())
print(throughput.to_string())
