rule chart:
    input:
        get_chart_table,
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
        name="|".join(GENERIC_CHARTS),
    conda:
        ENV_FILE
    params:
        code=code_digest("chart.py"),
        config=job_config("chart.py"),
    script:
        "../scripts/chart.py"


rule machine_fingerprint:
    """The machine's fingerprint: static identity, bandwidth, compute rate, core interference,
    steal and clock, measured in at most a minute. A timing job: every core and the bench_slot.
    """
    output:
        report(
            f"{RESULTS}/tables/machine.parquet",
            caption="../report/machine.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/machine.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        cpus=config["bench"].get("cpus"),
        code=code_digest("machine_fingerprint.py"),
        config=job_config("machine_fingerprint.py"),
    script:
        "../scripts/machine_fingerprint.py"


rule decision:
    """Each build against the study's requirements (its budget): met, not met or undecided."""
    input:
        unpack(get_decision_inputs),
    output:
        table=report(
            f"{RESULTS}/tables/decision.parquet",
            caption="../report/decision.rst",
            category="Decision",
        ),
        md=report(
            f"{RESULTS}/decision.md",
            caption="../report/decision.rst",
            category="Decision",
        ),
    log:
        f"{RESULTS}/logs/tables/decision.log",
    conda:
        ENV_FILE
    params:
        requirements=decision_requirements(),
        arms=decision_arms(),
        others=decision_other_arms(),
        code=code_digest("decision.py"),
        config=job_config("decision.py"),
    script:
        "../scripts/decision.py"


rule findings:
    """What the study found, written from its tables: the report's first page."""
    input:
        unpack(get_findings_inputs),
    output:
        report(
            f"{RESULTS}/findings.md",
            caption="../report/findings.rst",
            category="1 Findings",
        ),
    log:
        f"{RESULTS}/logs/tables/findings.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("findings.py"),
        config=job_config("findings.py"),
    script:
        "../scripts/findings.py"


rule report_page:
    """The report's first page: the decision, how this study measured (from its config) and its
    findings. `snakemake --report` opens on it once the study has run."""
    input:
        unpack(get_report_page_inputs),
    output:
        REPORT_PAGE,
    log:
        f"{RESULTS}/logs/tables/report_page.log",
    conda:
        ENV_FILE
    params:
        model=MODEL,
        code=code_digest("report_page.py"),
        config=job_config("report_page.py"),
    script:
        "../scripts/report_page.py"
