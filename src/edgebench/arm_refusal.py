"""An arm this CPU cannot run is refused before any process of it starts.

The engine applies the same rules when it loads (`edgebench.isa.require_kernel`, and the record of an
environment the CPU refused), so refusing here changes no row's verdict or text: it spares each job
an engine start that could only end in that refusal (importing vLLM alone costs seconds of CPU, and
a study without the flags an arm needs would pay it in every rep, session, fidelity and agent job).
"""

from __future__ import annotations

from edgebench.envs.record import require_runnable
from edgebench.isa import UnsupportedArm, require_kernel
from edgebench.jobs import environment_of
from edgebench.procfs import cpu_flags
from edgebench.rows import arm_kernel


def require_cpu(config: dict, arm_name: str, flags: set[str] | None = None) -> None:
    """Raise UnsupportedArm, naming what is missing, for an arm this CPU cannot run: its
    environment's CPU rule, then its kernel's."""
    flags = cpu_flags() if flags is None else flags
    require_runnable(environment_of(config["arms"][arm_name]))
    require_kernel(arm_kernel(config, arm_name, flags), flags, arm_name)


def kernel_refusal(config: dict, arm_name: str, flags: set[str]) -> str | None:
    """The kernel rule's sentence for an arm this CPU cannot run, or None (no environment read)."""
    try:
        require_kernel(arm_kernel(config, arm_name, flags), flags, arm_name)
    except UnsupportedArm as error:
        return str(error)
    return None


def refusal(config: dict, arm_name: str, flags: set[str] | None = None) -> str | None:
    """A refused arm's failure text (`UnsupportedArm: ...`, as an engine that refused at load
    reports it), or None where this CPU runs the arm."""
    try:
        require_cpu(config, arm_name, flags)
    except UnsupportedArm as error:
        return f"UnsupportedArm: {error}"
    return None
