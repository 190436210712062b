from edgebench.fidelity.score import run_fidelity_arm
from edgebench.jobs import start_job

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    run_fidelity_arm(
        sm.params.config,
        f"{sm.wildcards.engine}/{sm.wildcards.label}",
        build_json=sm.input.build,
        windows_json=sm.input.windows,
        reference_npy=sm.input.reference,
        reference_greedy_json=sm.input.greedy,
        summary_out=sm.output.summary,
        positions_out=sm.output.positions,
        code_digest=sm.params.code,
    )
