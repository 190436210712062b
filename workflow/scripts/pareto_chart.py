from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.charts import pareto_chart, pareto_frame, save_chart  # noqa: E402

sm = snakemake  # noqa: F821
frame = pareto_frame(*(pd.read_parquet(sm.input[k]) for k in ("builds", "bench", "fidelity")), sm.params.arms)
save_chart(pareto_chart(frame), png=sm.output.png, svg=sm.output.svg, html=sm.output.html)
