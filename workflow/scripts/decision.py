from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.decision_rule import write_decision  # noqa: E402

sm = snakemake  # noqa: F821
requirements, arms = dict(sm.params.requirements), list(sm.params.arms)
write_decision(
    dict(sm.input),
    requirements,
    arms,
    list(sm.params.others),
    sm.output.table,
    sm.output.md,
    arm_configs=sm.params.config["arms"],
)
