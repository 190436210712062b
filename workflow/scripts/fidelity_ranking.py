from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.charts import ranking_chart, save_chart  # noqa: E402
from edgebench.fidelity.ranking import ranking_rows  # noqa: E402
from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
ranking = ranking_rows(pd.read_parquet(sm.input.fidelity), pd.read_parquet(sm.input.builds))
write_parquet_atomic(ranking, sm.output.table)
save_chart(ranking_chart(ranking), png=sm.output.png, svg=sm.output.svg, html=sm.output.html)
print(ranking.to_string())
