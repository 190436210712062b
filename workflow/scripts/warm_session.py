from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.bench.warm import measure_session  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.tables import rows_frame  # noqa: E402

sm = snakemake  # noqa: F821
build_dirs = {Path(path).parent.name: str(Path(path).parent) for path in sm.input.builds}
rows = measure_session(sm.params.config, build_dirs, sm.params.code, int(sm.wildcards.session))
write_parquet(rows_frame("warm", rows), sm.output[0])
