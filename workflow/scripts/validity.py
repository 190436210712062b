from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.validity import validity_rows  # noqa: E402
from edgebench.tables import write_parquet_atomic  # noqa: E402

sm = snakemake  # noqa: F821
calibration = pd.read_parquet(sm.input[0])
settings = dict(sm.params.calibration)
settings["effect"] = sm.config["arms"][settings["injected"]]["inject_slowdown"]
rows = validity_rows(
    calibration, settings, sm.params.gates["max_spread"], int(settings.get("reps", sm.params.reps))
)
frame = pd.DataFrame(rows)
frame["run_id"], frame["git_commit"] = calibration["run_id"].iloc[0], calibration["git_commit"].iloc[0]
write_parquet_atomic(frame, sm.output[0])
print(frame.T.to_string())
