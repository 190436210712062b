from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.charts import CHARTS, save_chart  # noqa: E402

sm = snakemake  # noqa: F821
chart = CHARTS[sm.wildcards.name](pd.read_parquet(sm.input[0]))
save_chart(chart, png=sm.output.png, svg=sm.output.svg, html=sm.output.html)
