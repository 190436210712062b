rule fidelity_windows:
    input:
        build_json("reference"),
    output:
        f"{RESULTS}/fidelity/windows.json",
    log:
        f"{RESULTS}/logs/fidelity/windows.log",
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
        windows=f"{RESULTS}/fidelity/windows.json",
    output:
        logprobs=f"{RESULTS}/fidelity/reference_logprobs.npy",
        greedy=f"{RESULTS}/fidelity/reference_greedy.json",
    log:
        f"{RESULTS}/logs/fidelity/reference.log",
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
        envs=get_arm_environments,
        ready=get_environments_ready,
        windows=f"{RESULTS}/fidelity/windows.json",
        reference=f"{RESULTS}/fidelity/reference_logprobs.npy",
        greedy=f"{RESULTS}/fidelity/reference_greedy.json",
    output:
        summary=f"{RESULTS}/raw/fidelity/{{engine}}/{{label}}/summary.parquet",
        positions=f"{RESULTS}/raw/fidelity/{{engine}}/{{label}}/positions.parquet",
    log:
        f"{RESULTS}/logs/fidelity/{{engine}}/{{label}}.log",
    conda:
        ENV_FILE
    threads: config["fidelity"]["threads_per_arm"]
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
            f"{RESULTS}/tables/fidelity.parquet",
            caption="../report/fidelity_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/fidelity.log",
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
        f"{RESULTS}/tables/fidelity_positions.parquet",
    log:
        f"{RESULTS}/logs/tables/fidelity_positions.log",
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
        fidelity=f"{RESULTS}/tables/fidelity.parquet",
        builds=f"{RESULTS}/tables/builds.parquet",
    output:
        table=report(
            f"{RESULTS}/tables/fidelity_ranking.parquet",
            caption="../report/fidelity_ranking.rst",
            category="Tables",
        ),
        png=report(
            f"{RESULTS}/charts/fidelity_ranking.png",
            caption="../report/fidelity_ranking.rst",
            category="Charts",
            labels={"chart": "fidelity_ranking", "format": "png"},
        ),
        svg=f"{RESULTS}/charts/fidelity_ranking.svg",
        html=f"{RESULTS}/charts/fidelity_ranking.html",
    log:
        f"{RESULTS}/logs/tables/fidelity_ranking.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("fidelity_ranking.py"),
        config=job_config("fidelity_ranking.py"),
    script:
        "../scripts/fidelity_ranking.py"
