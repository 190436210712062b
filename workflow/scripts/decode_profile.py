from pathlib import Path

from edgebench.diagnostics.decode_profile import run_decode_profile
from edgebench.jobs import start_job

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    run_decode_profile(
        sm.params.config,
        f"{sm.wildcards.engine}/{sm.wildcards.label}",
        build_dir=str(Path(sm.input.build).parent),
        out=sm.output[0],
        code_digest=sm.params.code,
    )
