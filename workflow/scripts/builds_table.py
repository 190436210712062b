from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from edgebench.io import write_parquet  # noqa: E402

sm = snakemake  # noqa: F821
rows = []
for path in sm.input:
    info = json.loads(Path(path).read_text())
    info["tensor_types"] = json.dumps(info.get("tensor_types") or {}, sort_keys=True)
    rows.append(info)
frame = pd.DataFrame(rows)
write_parquet(frame, sm.output[0])
print(
    frame[
        ["build", "method", "format", "bits_per_weight", "bytes_on_disk", "build_s", "peak_rss_mb"]
    ].to_string()
)
