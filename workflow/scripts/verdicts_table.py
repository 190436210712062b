from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.io import write_parquet, write_text  # noqa: E402
from edgebench.items.verdict import elsewhere_row, render_index  # noqa: E402

sm = snakemake  # noqa: F821
elsewhere = pd.DataFrame([elsewhere_row(item) for item in sm.params.elsewhere])
verdicts = pd.concat([*(pd.read_parquet(p) for p in sm.input), elsewhere], ignore_index=True)
write_parquet(verdicts, sm.output[0])
write_text(render_index(verdicts, sm.params.retractions), sm.output.index)
print(verdicts[["id", "verdict"]].to_string())
