import json
from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.fidelity.score import reference_greedy, reference_logprobs  # noqa: E402
from edgebench.io import save_npy, write_text  # noqa: E402

sm = snakemake  # noqa: F821
corpus = json.loads(Path(sm.input.windows).read_text())
build_dir = str(Path(sm.input.model).parent)
save_npy(reference_logprobs(build_dir, corpus["windows"], sm.threads), sm.output.logprobs)
write_text(json.dumps(reference_greedy(build_dir, corpus["greedy_prompts"], sm.threads)), sm.output.greedy)
