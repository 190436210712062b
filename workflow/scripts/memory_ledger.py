from edgebench.diagnostics.ledger_rule import run_memory_ledger
from edgebench.jobs import start_job

if __name__ == "__main__":  # the engine may spawn processes that re-import this module
    sm = snakemake  # noqa: F821
    start_job(sm)
    run_memory_ledger(
        sm.params.config,
        f"{sm.wildcards.engine}/{sm.wildcards.label}",
        build_json=sm.input.build,
        out=sm.output[0],
        code_digest=sm.params.code,
    )
