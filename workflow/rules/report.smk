rule chart:
    input:
        f"{RESULTS}/tables/{{name}}.parquet",
    output:
        png=report(
            f"{RESULTS}/charts/{{name}}.png",
            caption="../report/chart.rst",
            category="Charts",
            labels={"chart": "{name}", "format": "png"},
        ),
        svg=f"{RESULTS}/charts/{{name}}.svg",
        html=report(
            f"{RESULTS}/charts/{{name}}.html",
            caption="../report/chart.rst",
            category="Charts",
            labels={"chart": "{name}", "format": "html"},
        ),
    log:
        f"{RESULTS}/logs/charts/{{name}}.log",
    wildcard_constraints:
        name="warm|validity|fidelity|gates|agent_summary|fidelity_positions|memory_ledger|imports|kernels",
    conda:
        ENV_FILE
    params:
        code=code_digest("chart.py"),
        config=job_config("chart.py"),
    script:
        "../scripts/chart.py"
