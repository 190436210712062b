from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.models.reference import build_reference  # noqa: E402

build_reference(snakemake.params.model, Path(snakemake.output[0]).parent)  # noqa: F821
