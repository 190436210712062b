import tempfile
from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.pilot import run_design, summarize  # noqa: E402
from edgebench.bench.spec import engine_spec  # noqa: E402
from edgebench.bench.warm import settings_from  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.provenance import PROVENANCE_COLUMNS  # noqa: E402
from edgebench.rows import arm_row  # noqa: E402

sm = snakemake  # noqa: F821
pilot = sm.params.pilot
spec = engine_spec(sm.params.config, pilot["arm"], str(Path(sm.input.build).parent))
settings = settings_from(sm.params.config)
settings.rounds = int(pilot["rounds"])
with tempfile.TemporaryDirectory(prefix="edgebench-pilot-") as workdir:
    samples = pd.concat(
        [
            run_design(spec, int(pilot["processes"]), design, settings, Path(workdir), print)
            for design in ("sequential", "duet")
        ],
        ignore_index=True,
    )
identity = arm_row(
    sm.params.config, pilot["arm"], code_digest=sm.params.code, cpus=sm.params.config["bench"].get("cpus")
)
summary = summarize(samples, float(sm.params.tolerance), int(sm.params.config["bench"]["warm_rounds"]))
for frame in (samples, summary):
    for key in PROVENANCE_COLUMNS:
        frame[key] = identity[key]
write_parquet(samples, sm.output.samples)
write_parquet(summary, sm.output.table)
print(summary.T.to_string())
