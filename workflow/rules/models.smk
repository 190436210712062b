rule reference_model:
    output:
        "results/models/reference/build.json",
    params:
        model=config["model"],
        code=code_digest("models"),
    log:
        "results/logs/models/reference.log",
    conda:
        ENV_FILE
    threads: workflow.cores
    script:
        "../scripts/build_reference.py"


rule gptq_build:
    input:
        build_json("reference"),
    output:
        "results/models/{build}/build.json",
    params:
        spec=get_build_spec,
        code=code_digest("models"),
    wildcard_constraints:
        build="(?!reference$)[a-z0-9][a-z0-9_.-]*",
    log:
        "results/logs/models/{build}.log",
    conda:
        ENV_FILE
    threads: workflow.cores
    resources:
        mem_mb=8000,
    script:
        "../scripts/build_gptq.py"
