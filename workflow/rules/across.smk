rule history_append:
    """Append the study's summaries (every arm x metric, absolute and paired) to the history store
    named by `history`, keyed by machine digest, study and commit. Rerun on the same tables, it
    rewrites the same entry.
    """
    input:
        unpack(get_across_inputs),
    output:
        f"{RESULTS}/checks/history.txt",
    log:
        f"{RESULTS}/logs/tables/history.log",
    conda:
        ENV_FILE
    params:
        store=config["history"],
        code=code_digest("history_append.py"),
        config=job_config("history_append.py"),
    script:
        "../scripts/history_append.py"


rule compare_studies:
    """This study against each folder in `compare_with` (edgebench compare): the table, a page
    with the verdicts first and what differs, and a chart of each arm across studies.
    """
    input:
        unpack(get_across_inputs),
    output:
        table=f"{RESULTS}/compare/compare_studies.parquet",
        differences=f"{RESULTS}/compare/compare_studies_differences.parquet",
        page=report(
            f"{RESULTS}/compare/compare_studies.md",
            caption="../report/compare_studies.rst",
            category="2 Compared with other studies",
        ),
        png=f"{RESULTS}/compare/compare_studies.png",
        svg=f"{RESULTS}/compare/compare_studies.svg",
        html=report(
            f"{RESULTS}/compare/compare_studies.html",
            caption="../report/compare_studies.rst",
            category="2 Compared with other studies",
        ),
    log:
        f"{RESULTS}/logs/tables/compare_studies.log",
    conda:
        ENV_FILE
    params:
        others=config["compare_with"],
        code=code_digest("compare_studies.py"),
        config=job_config("compare_studies.py"),
    script:
        "../scripts/compare_studies.py"
