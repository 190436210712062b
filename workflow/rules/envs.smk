rule environment:
    """An arm's Python environment (config.environments), created once with uv in a folder named
    by the digest of its spec and shared by every study. It runs before any measuring job, so a
    requirement that cannot be installed, or an engine that does not import in it, stops the
    study before anything is measured. A CPU the environment needs but lacks gets a record of the
    refusal instead, and its arms' rows say why they did not run.
    """
    output:
        f"{ENVS_DIR}/{{digest}}/environment.json",
    log:
        f"{ENVS_DIR}/logs/{{digest}}.log",
    priority: 100
    conda:
        ENV_FILE
    params:
        name=environment_name,
        spec=environment_spec,
        imports=environment_imports,
    script:
        "../scripts/environment.py"


rule environments_ready:
    """Every environment the study's arms name exists (or was refused by its CPU rule): each
    measuring job waits for this, so one environment that cannot be created stops them all, main
    environment arms included, before anything is measured. Jobs take it as `ancient`, so a new
    environment reruns only the jobs of the arms that name it.
    """
    input:
        get_study_environments,
    output:
        f"{RESULTS}/envs/ready.json",
    log:
        f"{RESULTS}/logs/envs/ready.log",
    conda:
        ENV_FILE
    script:
        "../scripts/environments_ready.py"
