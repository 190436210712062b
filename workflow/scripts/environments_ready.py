import json

from edgebench.envs.record import read_record
from edgebench.io import write_text
from edgebench.scriptlog import redirect_to_log

sm = snakemake  # noqa: F821
redirect_to_log(sm.log[0])
records = [read_record(path) for path in sm.input]
ready = {r["name"]: {"digest": r["digest"], "refused": r.get("refused", "")} for r in records}
print(json.dumps(ready, indent=2), flush=True)
write_text(json.dumps(ready, indent=2, sort_keys=True), sm.output[0])
