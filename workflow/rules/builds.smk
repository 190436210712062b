rule builds_table:
    input:
        get_build_jsons,
    output:
        report(
            f"{RESULTS}/tables/builds.parquet",
            caption="../report/builds_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/builds.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("builds_table.py"),
        config=job_config("builds_table.py"),
    script:
        "../scripts/builds_table.py"


rule pareto_chart:
    input:
        builds=f"{RESULTS}/tables/builds.parquet",
        bench=f"{RESULTS}/tables/warm.parquet",
        fidelity=f"{RESULTS}/tables/fidelity.parquet",
    output:
        png=report(
            f"{RESULTS}/charts/pareto.png",
            caption="../report/pareto_chart.rst",
            category="Charts",
            labels={"chart": "pareto", "format": "png"},
        ),
        svg=f"{RESULTS}/charts/pareto.svg",
        html=f"{RESULTS}/charts/pareto.html",
    log:
        f"{RESULTS}/logs/charts/pareto.log",
    conda:
        ENV_FILE
    params:
        arms=decision_arms(),  # the user's builds: no calibration twin or injected arm
        code=code_digest("pareto_chart.py"),
        config=job_config("pareto_chart.py"),
    script:
        "../scripts/pareto_chart.py"
