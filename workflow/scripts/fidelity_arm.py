from edgebench.envs.call import call_for_arm
from edgebench.fidelity.score import run_fidelity_arm
from edgebench.jobs import start_job

TIMEOUT_S = 4 * 3600  # one arm's scoring over the whole corpus on one core

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    arm = f"{sm.wildcards.engine}/{sm.wildcards.label}"
    call_for_arm(
        sm.params.config["arms"][arm],
        run_fidelity_arm,
        {
            "config": sm.params.config,
            "arm_name": arm,
            "build_json": sm.input.build,
            "windows_json": sm.input.windows,
            "reference_npy": sm.input.reference,
            "reference_greedy_json": sm.input.greedy,
            "summary_out": sm.output.summary,
            "positions_out": sm.output.positions,
            "code_digest": sm.params.code,
        },
        TIMEOUT_S,
    )
