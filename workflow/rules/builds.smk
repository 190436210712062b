rule builds_table:
    input:
        get_build_jsons,
    output:
        report(
            "results/tables/builds.parquet",
            caption="../report/builds_table.rst",
            category="Tables",
        ),
    log:
        "results/logs/tables/builds.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("builds_table.py"),
        config=job_config("builds_table.py"),
    script:
        "../scripts/builds_table.py"


rule pareto_chart:
    input:
        builds="results/tables/builds.parquet",
        bench="results/tables/warm.parquet",
        fidelity="results/tables/fidelity.parquet",
    output:
        png=report(
            "results/charts/pareto.png",
            caption="../report/pareto_chart.rst",
            category="Charts",
            labels={"chart": "pareto", "format": "png"},
        ),
        svg="results/charts/pareto.svg",
        html="results/charts/pareto.html",
    log:
        "results/logs/charts/pareto.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("pareto_chart.py"),
        config=job_config("pareto_chart.py"),
    script:
        "../scripts/pareto_chart.py"
