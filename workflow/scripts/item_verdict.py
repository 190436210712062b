from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.items.verdict import write_verdict  # noqa: E402

sm = snakemake  # noqa: F821
out = {key: sm.output[key] for key in ("md", "table", "png", "svg", "html")}
row = write_verdict(sm.params.item, list(sm.input), sm.params.retractions, out)
print(f"{row['id']}: {row['verdict']}")
