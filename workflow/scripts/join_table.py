from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.io import write_parquet  # noqa: E402
from edgebench.retractions import apply_retractions  # noqa: E402
from edgebench.tables import join_parquet  # noqa: E402

sm = snakemake  # noqa: F821
table = sm.params.table
frame = apply_retractions(join_parquet(table, list(sm.input)), table, sm.params.retractions)
write_parquet(frame, sm.output[0])
print(frame.groupby(["arm", "status"]).size().to_string())
