from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.bench.rep import measure_rep  # noqa: E402
from edgebench.tables import rows_frame, write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
arm = f"{sm.wildcards.engine}/{sm.wildcards.label}"
row = measure_rep(sm.config, arm, int(sm.wildcards.rep), str(Path(sm.input.build).parent), sm.params.code)
write_parquet_atomic(rows_frame("bench", [row]), sm.output[0])
