from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from pathlib import Path  # noqa: E402

from edgebench.crossstudy.run import compare_studies  # noqa: E402

sm = snakemake  # noqa: F821
results = Path(sm.input.warm).parents[1]  # this study's results folder: tables/ lies under it
written = compare_studies([results, *sm.params.others], Path(sm.output.page).parent)
print(written["page"].read_text())
