from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.diagnostics.kernel_rule import run_kernel_study  # noqa: E402

sm = snakemake  # noqa: F821
run_kernel_study(
    sm.params.config, sm.params.kernels, build_json=sm.input[0], out=sm.output[0], code_digest=sm.params.code
)
