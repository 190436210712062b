from pathlib import Path

from edgebench.agent.arm_trials import write_arm_trials
from edgebench.envs.call import call_for_arm
from edgebench.jobs import start_job

TIMEOUT_S = 6 * 3600  # the whole suite of one arm; its engine's own calls have their own limits

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    arm = f"{sm.wildcards.engine}/{sm.wildcards.label}"
    call_for_arm(
        sm.params.config["arms"][arm],
        write_arm_trials,
        {
            "config": sm.params.config,
            "arm_name": arm,
            "build_dir": str(Path(sm.input.build).parent),
            "code_digest": sm.params.code,
            "out": sm.output[0],
        },
        TIMEOUT_S,
    )
