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
