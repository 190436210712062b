from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.charts import ranking_chart, save_chart  # noqa: E402
from edgebench.fidelity.ranking import ranking_rows  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
ranking = ranking_rows(pd.read_parquet(sm.input.fidelity), pd.read_parquet(sm.input.builds))
write_parquet(ranking, sm.output.table)
save_chart(ranking_chart(ranking), png=sm.output.png, svg=sm.output.svg, html=sm.output.html)
print(ranking.to_string())
