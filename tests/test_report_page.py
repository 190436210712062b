"""The report's first page: the decision first, then the design this study ran, from its config."""

import copy

import pandas as pd
import pytest
import yaml
from docutils.core import publish_string

from edgebench.report_page import inline, page

from .conftest import ROOT

CONFIG = yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text())


def decision(values: dict[str, float]) -> pd.DataFrame:
    """One requirement (decode_tok_s >= 5), one build per value, each with a tight interval."""
    rows = []
    for arm, value in values.items():
        verdict = "met" if value * 0.98 >= 5 else "not met"
        rows.append(
            {"arm": arm, "requirement": "decode_tok_s >= 5", "metric": "decode_tok_s", "unit": "tok/s",
             "bound": 5.0, "direction": "at_least", "value": value, "low": value * 0.98,
             "high": value * 1.02, "n": 10, "why": "", "verdict": verdict,
             "build_verdict": "fits" if verdict == "met" else "does not fit"}
        )  # fmt: skip
    return pd.DataFrame(rows)


def rendered(text: str) -> str:
    """The page as the report renders it (Jinja's raw block is the report's to strip), failing on
    any reStructuredText warning."""
    body = text.removeprefix("{% raw %}\n").removesuffix("{% endraw %}\n")
    return publish_string(body, writer="html", settings_overrides={"halt_level": 2}).decode()


def test_the_page_opens_on_the_build_to_deploy_and_every_row():
    text = page(CONFIG, "tiny", decision({"vllm/bf16": 3120.0, "vllm/w8a8": 4.0}), "# Findings\n{braces}\n")
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[1:4] == ["edgebench study ci-tiny", "=======================", "Decision"]
    assert lines[5].startswith("**Deploy vllm/bf16**")  # bold text: reStructuredText does not nest
    html = rendered(text)
    assert "3,120 tok/s" in html and "e+0" not in html
    assert "vllm/w8a8" in html and "does not fit" in html


@pytest.mark.parametrize(
    "design, said", [("interleaved", "taking turns 4 decode tokens"), ("duet", "one per core")]
)
def test_the_design_is_the_one_the_config_ran(design, said):
    config = copy.deepcopy(CONFIG)
    config["bench"]["warm_design"] = design
    text = page(config, "tiny", None, "")
    assert f"``{design}`` design (" in text and said in text
    assert "No deployment budget" in text
    assert "``vllm/bf16-twin``" in text  # the calibration this config runs
    config.pop("calibration")
    assert "No gate calibration in this study" in page(config, "tiny", None, "")
    rendered(text)


def test_code_inside_bold_is_not_nested_markup():
    assert inline("**Deploy `a/b`**: best on `x`.") == "**Deploy a/b**: best on ``x``."
