import pandas as pd

from edgebench.io import write_text
from edgebench.jobs import start_job
from edgebench.report_page import page

sm = snakemake  # noqa: F821
start_job(sm)
decision = pd.read_parquet(sm.input.decision) if "decision" in sm.input.keys() else None
findings = open(sm.input.findings, encoding="utf-8").read()
write_text(page(sm.params.config, sm.params.model, decision, findings), sm.output[0])
