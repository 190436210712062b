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
        code=code_digest("fidelity_windows.py"),
        config=job_config("fidelity_windows.py"),
    script:
        "../scripts/fidelity_windows.py"


rule fidelity_reference:
    """The bf16 reference once: full-vocabulary log-probabilities at every scored position (float16)
    and greedy continuations of the legacy prompts."""
    input:
        model=build_json("reference"),
        windows="results/fidelity/windows.json",
    output:
        logprobs="results/fidelity/reference_logprobs.npy",
        greedy="results/fidelity/reference_greedy.json",
    log:
        "results/logs/fidelity/reference.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    params:
        code=code_digest("fidelity_reference.py"),
        config=job_config("fidelity_reference.py"),
    script:
        "../scripts/fidelity_reference.py"


rule fidelity_arm:
    input:
        build=get_arm_build_json,
        windows="results/fidelity/windows.json",
        reference="results/fidelity/reference_logprobs.npy",
        greedy="results/fidelity/reference_greedy.json",
    output:
        summary="results/raw/fidelity/{engine}/{label}/summary.parquet",
        positions="results/raw/fidelity/{engine}/{label}/positions.parquet",
    log:
        "results/logs/fidelity/{engine}/{label}.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    params:
        code=code_digest("fidelity_arm.py"),
        config=job_config("fidelity_arm.py"),
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
        code=code_digest("join_table.py"),
        config=job_config("join_table.py"),
    script:
        "../scripts/join_table.py"


rule fidelity_positions_table:
    input:
        get_fidelity_positions,
    output:
        "results/tables/fidelity_positions.parquet",
    log:
        "results/logs/tables/fidelity_positions.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("concat_parquet.py"),
        config=job_config("concat_parquet.py"),
    script:
        "../scripts/concat_parquet.py"


rule fidelity_ranking:
    """Does KL/top-1 rank builds where the legacy greedy check ties?"""
    input:
        fidelity="results/tables/fidelity.parquet",
        builds="results/tables/builds.parquet",
    output:
        table=report(
            "results/tables/fidelity_ranking.parquet",
            caption="../report/fidelity_ranking.rst",
            category="Tables",
        ),
        png=report(
            "results/charts/fidelity_ranking.png",
            caption="../report/fidelity_ranking.rst",
            category="Charts",
            labels={"chart": "fidelity_ranking", "format": "png"},
        ),
        svg="results/charts/fidelity_ranking.svg",
        html="results/charts/fidelity_ranking.html",
    log:
        "results/logs/tables/fidelity_ranking.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("fidelity_ranking.py"),
        config=job_config("fidelity_ranking.py"),
    script:
        "../scripts/fidelity_ranking.py"
