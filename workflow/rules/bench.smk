rule bench_rep:
    """One rep in a fresh process. Reps chain in the rotated schedule, and each claims every core
    plus the global bench_slot, so no other job runs beside a timing job."""
    input:
        build=get_arm_build_json,
        previous=get_previous_rep,
    output:
        "results/raw/bench/{engine}/{label}/rep{rep}.parquet",
    log:
        "results/logs/bench/{engine}/{label}/rep{rep}.log",
    conda:
        ENV_FILE
    threads: workflow.cores
    resources:
        bench_slot=1,
    params:
        code=code_digest(
            "bench", "engines", "procfs.py", "metrics.py", "schedule.py", *COMMON_CODE
        ),
    script:
        "../scripts/bench_rep.py"


rule bench_table:
    input:
        get_bench_reps,
    output:
        report(
            "results/tables/bench.parquet",
            caption="../report/bench_table.rst",
            category="Tables",
        ),
    log:
        "results/logs/tables/bench.log",
    conda:
        ENV_FILE
    params:
        code=code_digest(*COMMON_CODE),
    script:
        "../scripts/join_table.py"
