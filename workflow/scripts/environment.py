import os
import sys
from pathlib import Path

from edgebench.envs.create import EnvironmentNotCreated, create_environment, refuse_on_this_cpu
from edgebench.scriptlog import redirect_to_log

sm = snakemake  # noqa: F821
terminal = os.fdopen(os.dup(2), "w")  # the one-line reason goes where the user looks, too
redirect_to_log(sm.log[0])
folder = Path(sm.output[0]).parent
if not refuse_on_this_cpu(sm.params.name, sm.params.spec, folder):
    try:
        create_environment(sm.params.name, sm.params.spec, folder, sm.params.imports)
    except EnvironmentNotCreated as error:
        print(f"edgebench: {error}", file=terminal, flush=True)
        sys.exit(f"edgebench: {error}")
