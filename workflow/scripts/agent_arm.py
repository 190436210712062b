from pathlib import Path

from edgebench.agent.arm_trials import run_arm
from edgebench.io import write_parquet
from edgebench.jobs import start_job

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    arm = f"{sm.wildcards.engine}/{sm.wildcards.label}"
    frame = run_arm(sm.params.config, arm, str(Path(sm.input.build).parent), sm.params.code)
    write_parquet(frame, sm.output[0])
