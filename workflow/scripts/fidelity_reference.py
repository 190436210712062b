import json
from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.fidelity.score import reference_greedy, reference_logprobs, save_npy_atomic  # noqa: E402
from edgebench.tables import write_text_atomic  # noqa: E402

sm = snakemake  # noqa: F821
corpus = json.loads(Path(sm.input.windows).read_text())
build_dir = str(Path(sm.input.model).parent)
save_npy_atomic(reference_logprobs(build_dir, corpus["windows"], sm.threads), sm.output.logprobs)
write_text_atomic(
    json.dumps(reference_greedy(build_dir, corpus["greedy_prompts"], sm.threads)), sm.output.greedy
)
