import json
from pathlib import Path

from edgebench.jobs import start_job

start_job(snakemake)  # noqa: F821

from edgebench.fidelity.corpus import greedy_prompts, scored_positions, tokenize_corpus  # noqa: E402
from edgebench.io import write_text  # noqa: E402

sm = snakemake  # noqa: F821
settings = sm.params.fidelity
tokenizer_dir = str(Path(sm.input[0]).parent)
windows = tokenize_corpus(
    tokenizer_dir, settings["window_tokens"], settings["context_tokens"], settings["min_positions"]
)
prompts = greedy_prompts(tokenizer_dir)
print(f"{len(windows)} windows, {scored_positions(windows)} scored positions, {len(prompts)} greedy prompts")
write_text(json.dumps({"windows": windows, "greedy_prompts": prompts}), sm.output[0])
