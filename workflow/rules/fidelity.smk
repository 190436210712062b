rule fidelity_windows:
    input:
        build_json("reference"),
    output:
        "results/fidelity/windows.json",
    log:
        "results/logs/fidelity/windows.log",
    conda:
        ENV_FILE
    params:
        fidelity=config["fidelity"],
        code=code_digest("fidelity/corpus.py", "data/corpus"),
    script:
        "../scripts/fidelity_windows.py"


rule fidelity_reference:
    input:
        model=build_json("reference"),
        windows="results/fidelity/windows.json",
    output:
        "results/fidelity/reference_logprobs.npy",
    log:
        "results/logs/fidelity/reference.log",
    conda:
        ENV_FILE
    threads: workflow.cores
    params:
        code=code_digest("fidelity", "engines"),
    script:
        "../scripts/fidelity_reference.py"


rule fidelity_arm:
    input:
        build=get_arm_build_json,
        windows="results/fidelity/windows.json",
        reference="results/fidelity/reference_logprobs.npy",
    output:
        summary="results/raw/fidelity/{engine}/{label}/summary.parquet",
        positions="results/raw/fidelity/{engine}/{label}/positions.parquet",
    log:
        "results/logs/fidelity/{engine}/{label}.log",
    conda:
        ENV_FILE
    threads: workflow.cores
    params:
        code=code_digest("fidelity", "engines", *COMMON_CODE),
    script:
        "../scripts/fidelity_arm.py"


rule fidelity_table:
    input:
        get_fidelity_rows,
    output:
        report(
            "results/tables/fidelity.parquet",
            caption="../report/fidelity_table.rst",
            category="Tables",
        ),
    log:
        "results/logs/tables/fidelity.log",
    conda:
        ENV_FILE
    params:
        table="fidelity",
        retractions=RETRACTIONS,
        code=code_digest("retractions.py", *COMMON_CODE),
    script:
        "../scripts/join_table.py"
