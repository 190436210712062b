from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.bench.rep import measure_rep  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.tables import rows_frame  # noqa: E402

sm = snakemake  # noqa: F821
rows = measure_rep(
    sm.params.config,
    sm.wildcards.study,
    f"{sm.wildcards.engine}/{sm.wildcards.label}",
    int(sm.wildcards.rep),
    sm.params.slot,
    str(Path(sm.input.build).parent),
    sm.params.code,
    list(sm.input.earlier),
)
write_parquet(rows_frame("bench", rows), sm.output[0])
