from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.models.quantized import build_quantized  # noqa: E402

sm = snakemake  # noqa: F821
build_quantized(
    Path(sm.input[0]).parent,
    Path(sm.output[0]).parent,
    sm.wildcards.build,
    sm.params.spec,
    sm.params.config["model"],
)
