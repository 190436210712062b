from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.tables import join_parquet, write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
table = sm.params.table
frame = join_parquet(table, list(sm.input))
write_parquet_atomic(frame, sm.output[0])
print(frame.groupby(["arm", "status"]).size().to_string())
