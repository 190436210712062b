from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.items.verdict import render_index  # noqa: E402
from edgebench.tables import write_parquet_atomic, write_text_atomic  # noqa: E402

sm = snakemake  # noqa: F821
verdicts = pd.concat([pd.read_parquet(p) for p in sm.input], ignore_index=True)
write_parquet_atomic(verdicts, sm.output[0])
write_text_atomic(render_index(verdicts, sm.params.retractions), sm.output.index)
print(verdicts[["id", "verdict"]].to_string())
