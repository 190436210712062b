from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.models.quantized import build_quantized  # noqa: E402

sm = snakemake  # noqa: F821
build_quantized(
    Path(sm.input[0]).parent,
    Path(sm.output[0]).parent,
    sm.wildcards.build,
    sm.params.spec,
    sm.params.config["model"],
)
