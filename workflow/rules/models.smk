rule reference_model:
    output:
        f"{RESULTS}/models/reference/build.json",
    log:
        f"{RESULTS}/logs/models/reference.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    params:
        model=config["model"],
        code=code_digest("build_reference.py"),
        config=job_config("build_reference.py"),
    script:
        "../scripts/build_reference.py"


rule quant_build:
    input:
        build_json("reference"),
        envs=get_build_environments,
    output:
        f"{RESULTS}/models/{{build}}/build.json",
    log:
        f"{RESULTS}/logs/models/{{build}}.log",
    wildcard_constraints:
        build="(?!reference$)[a-z0-9][a-z0-9_.-]*",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        mem_mb=8000,
    params:
        spec=get_build_spec,
        code=code_digest("build_quantized.py"),
        config=job_config("build_quantized.py"),
    script:
        "../scripts/build_quantized.py"
