from pathlib import Path

from edgebench.agent.runner import run_arm
from edgebench.scriptlog import redirect_to_log
from edgebench.tables import write_parquet_atomic

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    redirect_to_log(sm.log[0])
    arm = f"{sm.wildcards.engine}/{sm.wildcards.label}"
    frame = run_arm(sm.params.config, arm, str(Path(sm.input.build).parent), sm.params.code)
    write_parquet_atomic(frame, sm.output[0])
