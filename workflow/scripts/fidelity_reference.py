import json
from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.fidelity.score import reference_logprobs, save_npy_atomic  # noqa: E402

sm = snakemake  # noqa: F821
windows = json.loads(Path(sm.input.windows).read_text())
ref = reference_logprobs(str(Path(sm.input.model).parent), windows, sm.threads)
save_npy_atomic(ref, sm.output[0])
