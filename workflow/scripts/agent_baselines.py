from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.agent.runner import run_baselines  # noqa: E402
from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
write_parquet_atomic(run_baselines(sm.params.config, sm.params.code), sm.output[0])
