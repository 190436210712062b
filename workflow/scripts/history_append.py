from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from pathlib import Path  # noqa: E402

from edgebench.history.append_rule import append_study  # noqa: E402

sm = snakemake  # noqa: F821
results = Path(sm.input.warm).parents[1]  # the study's results folder: tables/ lies under it
append_study(str(results), sm.params.store, sm.output[0])
