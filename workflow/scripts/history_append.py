from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.history.append_rule import append_study  # noqa: E402

sm = snakemake  # noqa: F821
append_study(sm.params.results, sm.params.store, sm.output[0])
