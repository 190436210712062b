rule chart:
    input:
        "results/tables/{name}.parquet",
    output:
        png=report(
            "results/charts/{name}.png",
            caption="../report/chart.rst",
            category="Charts",
            labels={"chart": "{name}", "format": "png"},
        ),
        svg="results/charts/{name}.svg",
        html=report(
            "results/charts/{name}.html",
            caption="../report/chart.rst",
            category="Charts",
            labels={"chart": "{name}", "format": "html"},
        ),
    log:
        "results/logs/charts/{name}.log",
    wildcard_constraints:
        name="warm|validity|fidelity|gates|agent_summary|fidelity_positions|memory_ledger|imports|kernels",
    conda:
        ENV_FILE
    params:
        code=code_digest("chart.py"),
        config=job_config("chart.py"),
    script:
        "../scripts/chart.py"
