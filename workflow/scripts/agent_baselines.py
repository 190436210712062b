from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.agent.arm_trials import run_baselines  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
write_parquet(run_baselines(sm.params.config, sm.params.code), sm.output[0])
