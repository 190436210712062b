from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from edgebench.diagnostics.attribution import decode_attribution  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.models.hf_config import model_config  # noqa: E402

sm = snakemake  # noqa: F821
frame = decode_attribution(
    pd.read_parquet(sm.input.kernels),
    pd.read_parquet(sm.input.bench),
    sm.params.config["arms"],
    model_config(Path(sm.input.model).parent),
    sm.params.config["builds"],
)
write_parquet(frame, sm.output[0])
print(frame.to_string())
