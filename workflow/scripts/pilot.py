from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.bench.pilot import pilot_tables  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
build_dir = str(Path(sm.input.build).parent)
samples, summary = pilot_tables(
    sm.params.config, sm.params.pilot, build_dir, float(sm.params.tolerance), sm.params.code
)
write_parquet(samples, sm.output.samples)
write_parquet(summary, sm.output.table)
print(summary.T.to_string())
