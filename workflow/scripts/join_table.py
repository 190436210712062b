from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.retractions import apply_retractions  # noqa: E402
from edgebench.tables import join_parquet, write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
table = sm.params.table
frame = apply_retractions(join_parquet(table, list(sm.input)), table, sm.params.retractions)
write_parquet_atomic(frame, sm.output[0])
print(frame.groupby(["arm", "status"]).size().to_string())
