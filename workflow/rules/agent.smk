rule agent_baselines:
    """Scripted, do-nothing, round-trip, type-never-save and random policies: they check the checker."""
    output:
        AGENT_BASELINES,
    log:
        f"{RESULTS}/logs/agent/baselines.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("agent_baselines.py"),
        config=job_config("agent_baselines.py"),
    script:
        "../scripts/agent_baselines.py"


rule agent_arm:
    input:
        build=get_arm_build_json,
        envs=get_arm_environments,
        ready=get_environments_ready,
    output:
        f"{RESULTS}/raw/agent/{{model}}/{{engine}}/{{label}}/trials.parquet",
    log:
        f"{RESULTS}/logs/agent/{{model}}/{{engine}}/{{label}}.log",
    wildcard_constraints:
        model=MODEL,
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    params:
        code=code_digest("agent_arm.py"),
        config=job_config("agent_arm.py"),
    script:
        "../scripts/agent_arm.py"


rule agent_tables:
    input:
        get_agent_inputs,
    output:
        trials=report(
            f"{RESULTS}/tables/agent_trials.parquet",
            caption="../report/agent_trials.rst",
            category="Tables",
        ),
        summary=report(
            f"{RESULTS}/tables/agent_summary.parquet",
            caption="../report/agent_summary.rst",
            category="Tables",
        ),
        throughput=report(
            f"{RESULTS}/tables/agent_throughput.parquet",
            caption="../report/agent_throughput.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/agent.log",
    conda:
        ENV_FILE
    params:
        reference=get_agent_reference_arm,
        retractions=RETRACTIONS,
        code=code_digest("agent_tables.py"),
        config=job_config("agent_tables.py"),
    script:
        "../scripts/agent_tables.py"
