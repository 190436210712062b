from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.models.reference import build_reference  # noqa: E402

build_reference(snakemake.params.model, Path(snakemake.output[0]).parent)  # noqa: F821
