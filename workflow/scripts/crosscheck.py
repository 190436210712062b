from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.bench.crosscheck import crosscheck_tables  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
build_dir = str(Path(sm.input.build).parent)
frame, rounds = crosscheck_tables(sm.params.config, sm.params.crosscheck, build_dir, sm.params.code)
write_parquet(frame, sm.output.table)
write_parquet(rounds, sm.output.rounds)
print(frame.T.to_string())
