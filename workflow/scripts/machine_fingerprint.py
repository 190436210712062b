from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.machine.table import write_fingerprint  # noqa: E402

sm = snakemake  # noqa: F821
write_fingerprint(sm.output[0], sm.params.cpus, sm.params.config)
