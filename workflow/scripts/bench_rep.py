from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.bench.rep import RepJob, measure_rep  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.tables import rows_frame  # noqa: E402

sm = snakemake  # noqa: F821
job = RepJob(
    config=sm.params.config,
    study=sm.wildcards.study,
    arm=f"{sm.wildcards.engine}/{sm.wildcards.label}",
    rep=int(sm.wildcards.rep),
    slot=sm.params.slot,
    build_dir=str(Path(sm.input.build).parent),
    code_digest=sm.params.code,
)
rows = measure_rep(job, list(sm.input.earlier))
write_parquet(rows_frame("bench", rows), sm.output[0])
