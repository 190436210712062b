"""The arms a study's CPU refuses, listed when a run starts (Snakemake's onstart).

Only the Snakefile imports this module: it reads the config's `environments` section, and a job
script whose import closure reads a section reruns whenever that section changes (an edit to one
environment's pins must rerun only that environment's arms).
"""

from __future__ import annotations

from edgebench.arm_refusal import kernel_refusal
from edgebench.envs.spec import cpu_refusal


def refused_arms(config: dict, flags: set[str], vendor: str) -> dict[str, str]:
    """Every arm of the study that this CPU refuses, by the rule of the environment it names (read
    from the config's spec; the job reads the built record) or of its kernel, with the sentence.
    What a study started here will record as failed rows for those arms."""
    refused = {}
    for name, arm in config["arms"].items():
        env = arm.get("env")
        spec = config.get("environments", {}).get(env) if env else None
        why = (cpu_refusal(env, spec, flags, vendor) if spec else None) or kernel_refusal(config, name, flags)
        if why:
            refused[name] = why
    return refused


def refusal_summary(config: dict, flags: set[str], vendor: str) -> list[str]:
    """Lines for the start of a run: the arms this CPU refuses, each with its reason."""
    refused = refused_arms(config, flags, vendor)
    if not refused:
        return []
    return [
        f"{len(refused)} of {len(config['arms'])} arms are refused on this CPU (their rows will be "
        "failed, saying why; on a cluster each job applies the rule to its own node's CPU):",
        *(f"  {why}" if why.startswith(name) else f"  {name}: {why}" for name, why in refused.items()),
    ]
