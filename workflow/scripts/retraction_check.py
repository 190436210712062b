from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from pathlib import Path  # noqa: E402

from edgebench.io import write_text  # noqa: E402
from edgebench.retractions import check_repository  # noqa: E402

sm = snakemake  # noqa: F821
write_text(check_repository(Path(sm.params.root), list(sm.input.tables)), sm.output[0])
