"""Run one of edgebench's job functions under an arm's environment: a fidelity score or an agent
arm's trials, in a fresh process of that environment's interpreter, with the job's context (its
provenance and environment records) carried across. Run as
`python -m edgebench.envs.call REQUEST.json`."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from edgebench.jobs import current_context, current_environments, environment_of, resume_job
from edgebench.provenance import ENVIRONMENT_VARIABLE


class EnvironmentCallFailed(RuntimeError):
    """The function's process under the environment exited with an error (its traceback is in the
    job's log): the job fails, as it would have in the main environment."""


def call_for_arm(arm: dict, function, kwargs: dict, timeout_s: float):
    """`function` (a module-level function of edgebench, imported by the caller, so the job's code
    digest covers it) with `kwargs` for an arm: here for an arm of the main environment (or one
    whose environment this CPU refused, which the function reports), else in a fresh process of
    the arm's environment. Returns what it returns here; across processes, the function writes its
    outputs itself and this returns None."""
    record = environment_of(arm)
    if record is None or not record.get("python"):
        return function(**kwargs)
    target = f"{function.__module__}:{function.__name__}"
    with tempfile.TemporaryDirectory(prefix="edgebench-call-") as tmp:
        request = Path(tmp) / "request.json"
        request.write_text(
            json.dumps(
                {
                    "target": target,
                    "kwargs": kwargs,
                    "context": current_context(),
                    "environments": current_environments(),
                }
            )
        )
        environment = {**os.environ, ENVIRONMENT_VARIABLE: record["digest"]}
        print(f"running {target} under environment {record['name']} ({record['digest']})", flush=True)
        try:
            result = subprocess.run(
                [record["python"], "-m", "edgebench.envs.call", str(request)],
                env=environment,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise EnvironmentCallFailed(f"{target} under {record['name']}: over {timeout_s:.0f} s") from error
        if result.returncode != 0:
            raise EnvironmentCallFailed(f"{target} under {record['name']} exited with {result.returncode}")
    return None


def _resolve(target: str):
    module, function = target.split(":")
    return getattr(importlib.import_module(module), function)


def main(request_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    resume_job(request["context"], request["environments"])
    _resolve(request["target"])(**request["kwargs"])
    return 0


if __name__ == "__main__":  # engines may spawn processes that re-import this module
    sys.exit(main(sys.argv[1]))
