import tempfile
from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from edgebench.bench.crosscheck import agreement_rows, run_crosscheck  # noqa: E402
from edgebench.bench.spec import engine_spec  # noqa: E402
from edgebench.bench.warm import settings_from  # noqa: E402
from edgebench.io import write_parquet  # noqa: E402
from edgebench.rows import arm_row  # noqa: E402

sm = snakemake  # noqa: F821
check = sm.params.crosscheck
arm = check["arm"]
spec = engine_spec(sm.params.config, arm, str(Path(sm.input.build).parent))
settings = settings_from(sm.params.config)
settings.rounds = int(check["rounds"])
with tempfile.TemporaryDirectory(prefix="edgebench-crosscheck-") as workdir:
    rounds = run_crosscheck(spec, settings, int(check["iterations"]), Path(workdir))
    log = Path(workdir) / "crosscheck.log"
    print(log.read_text(errors="replace")[-3000:] if log.exists() else "", flush=True)
identity = arm_row(
    sm.params.config, arm, code_digest=sm.params.code, cpus=sm.params.config["bench"].get("cpus")
)
frame = pd.DataFrame(
    [{**identity, **row} for row in agreement_rows(rounds, "vllm", "vllm.benchmarks.latency")]
)
write_parquet(frame, sm.output.table)
write_parquet(pd.DataFrame([{**identity, **row, "rep": row["round"]} for row in rounds]), sm.output.rounds)
print(frame.T.to_string())
