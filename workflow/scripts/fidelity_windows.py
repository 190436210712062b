import json
from pathlib import Path

from edgebench.scriptlog import redirect_to_log

redirect_to_log(snakemake.log[0])  # noqa: F821

from edgebench.fidelity.corpus import scored_positions, tokenize_corpus  # noqa: E402
from edgebench.tables import write_text_atomic  # noqa: E402

sm = snakemake  # noqa: F821
settings = sm.params.fidelity
windows = tokenize_corpus(
    str(Path(sm.input[0]).parent),
    settings["window_tokens"],
    settings["context_tokens"],
    settings["min_positions"],
)
print(f"{len(windows)} windows, {scored_positions(windows)} scored positions")
write_text_atomic(json.dumps(windows), sm.output[0])
