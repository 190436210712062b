from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.models.gptq import build_gptq  # noqa: E402

out_dir = Path(snakemake.output[0]).parent  # noqa: F821
build_gptq(Path(snakemake.input[0]).parent, out_dir, snakemake.wildcards.build, snakemake.params.spec)  # noqa: F821
