rule item_verdict:
    """Reproduce one roadmap item from exactly the raw rows it names, and write its verdict."""
    input:
        get_item_inputs,
    output:
        md=f"{RESULTS}/items/{{item}}/verdict.md",
        table=f"{RESULTS}/items/{{item}}/verdict.parquet",
        png=report(
            f"{RESULTS}/items/{{item}}/evidence.png",
            caption="../report/item_evidence.rst",
            category="Roadmap items",
            labels={"item": "{item}"},
        ),
        svg=f"{RESULTS}/items/{{item}}/evidence.svg",
        html=f"{RESULTS}/items/{{item}}/evidence.html",
    log:
        f"{RESULTS}/logs/items/{{item}}.log",
    conda:
        ENV_FILE
    params:
        item=get_item,
        retractions=RETRACTIONS,
        code=code_digest("item_verdict.py"),
        config=job_config("item_verdict.py"),
    script:
        "../scripts/item_verdict.py"


rule verdicts_table:
    input:
        get_verdict_tables,
    output:
        report(
            f"{RESULTS}/tables/verdicts.parquet",
            caption="../report/verdicts.rst",
            category="Roadmap items",
        ),
        index=report(
            f"{RESULTS}/items/index.md",
            caption="../report/verdicts.rst",
            category="Roadmap items",
        ),
    log:
        f"{RESULTS}/logs/tables/verdicts.log",
    conda:
        ENV_FILE
    params:
        retractions=RETRACTIONS,
        elsewhere=ITEMS_ELSEWHERE,
        code=code_digest("verdicts_table.py"),
        config=job_config("verdicts_table.py"),
    script:
        "../scripts/verdicts_table.py"


rule items:
    """Every roadmap item's verdict: snakemake --cores 2 items"""
    input:
        f"{RESULTS}/tables/verdicts.parquet",


rule retraction_check:
    """Fails, naming file and line, if a retracted figure is still written in the repository's text."""
    input:
        tables=get_retraction_tables,
    output:
        f"{RESULTS}/checks/retracted_figures.txt",
    log:
        f"{RESULTS}/logs/checks/retracted_figures.log",
    conda:
        ENV_FILE
    params:
        retractions=RETRACTIONS,
        root=str(Path(workflow.basedir).parent),
        code=code_digest("retraction_check.py"),
        config=job_config("retraction_check.py"),
    script:
        "../scripts/retraction_check.py"
