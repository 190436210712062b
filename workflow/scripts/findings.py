from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.findings_rule import write_findings  # noqa: E402

sm = snakemake  # noqa: F821
write_findings(dict(sm.input), sm.output[0])
