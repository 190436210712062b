from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from edgebench.refusal_summary import refusal_summary
from edgebench.config import ConfigError, study_config
from edgebench.engines.registry import ENGINES, TOOL_METHODS, check_feature, supports
from edgebench.items.roadmap import (
    items_elsewhere,
    items_in_study,
    load_roadmap,
    reproducible,
)
from edgebench.machine.identity import cpuinfo_field
from edgebench.models.source import model_name
from edgebench.procfs import cpu_flags
from edgebench.retractions import load_retractions
from edgebench.envs.spec import environment_digests
from edgebench.codeclosure import config_sections_read, script_code_digest
from edgebench.studies import sections_made, session_arms, study_plan, study_slot
from edgebench.tables import (
    CHART_TABLES,
    GENERIC_CHARTS,
    RETRACTABLE,
    TABLES,
    study_tables,
)

# Read and validate before any job runs: config/config.yaml, then the overlay files named with
# `--config overlays=config/agent.yaml` (comma separated), then the rest of the command line
# (`--config study=config/full.yaml` takes another study as the base). A YAML
# error names its file and line; a wrong key or value stops here with a message naming it.
config, GIVEN_SECTIONS = study_config(
    "config/config.yaml", config, workflow.config_settings.replace_workflow_config
)
# Diagnostics (memory ledger, import profile, kernel study) run when the config has the section.
DIAGNOSTICS = "diagnostics" in GIVEN_SECTIONS

try:
    MACHINE_CORES = (
        workflow.cores
    )  # rules that must own the machine (timing, builds) take all of it
except WorkflowError:
    MACHINE_CORES = (
        1  # --report, --lint, --unlock: no job runs, so no core count is given
    )
# `roadmap: none` is a study without items; a named file that is missing stops here.
ROADMAP = (
    load_roadmap(config["roadmap"], config["arms"])
    if config["roadmap"] != "none"
    else []
)
ITEMS = items_in_study(ROADMAP, GIVEN_SECTIONS) if ROADMAP else {}
ITEMS_ELSEWHERE = items_elsewhere(ROADMAP, GIVEN_SECTIONS)
# The sections whose tables this study makes (edgebench.tables.TABLES names each table's section).
SECTIONS_MADE = sections_made(config, GIVEN_SECTIONS, bool(ITEMS))
RETRACTIONS = load_retractions(config["retractions"], {item["id"] for item in ROADMAP})
ENV_FILE = "../envs/edgebench.yaml"
# The study's model: a column of every row, and part of the agent trials' path.
MODEL = model_name(config["model"])
# Every output of the study lies under this folder (`results` for the default study; a study on
# another model names its own, so the two never overwrite each other).
RESULTS = config["results_dir"].rstrip("/")
# The report's first page, written from the study (edgebench.report_page); until the study has run,
# the report opens on the fixed description beside the Snakefile.
REPORT_PAGE = f"{RESULTS}/report/first_page.rst"


wildcard_constraints:
    item="[A-Za-z0-9_-]+",
    study="bench",
    engine="|".join(ENGINES),
    label="[A-Za-z0-9_.-]+",
    build="[a-z0-9][a-z0-9_.-]*",
    rep=r"\d+",
    digest="[0-9a-f]{16}",
    session=r"\d+",


def code_digest(script):
    """Digest of every package file the script can run (its import closure, read from the source):
    Snakemake does not track imported code, so this param makes an edit rerun exactly the rules
    whose scripts can run it. Nothing is listed by hand.
    """
    return script_code_digest(str(Path(workflow.basedir) / "scripts" / script))


def job_config(script):
    """The config sections the script's code reads (found in its import closure), as a param: the
    script reads config only from here, so editing a section reruns exactly the rules reading it.
    """
    path = str(Path(workflow.basedir) / "scripts" / script)
    # run_id always: every table the job writes is stamped with it
    sections = {"run_id", *config_sections_read(path, tuple(config))}
    return {section: config[section] for section in config if section in sections}


# Arms' own Python environments (config.environments), by the digest that names their folder.
ENVS_DIR = config["environments_dir"].rstrip("/")
ENVIRONMENT_DIGESTS = environment_digests(config)
ENVIRONMENTS_BY_DIGEST = {digest: name for name, digest in ENVIRONMENT_DIGESTS.items()}


def environment_name(wildcards):
    return ENVIRONMENTS_BY_DIGEST[wildcards.digest]


def environment_spec(wildcards):
    return config["environments"][environment_name(wildcards)]


def environment_imports(wildcards):
    """What each engine that runs in the environment imports first, by engine: the same for every
    study that shares the environment, so another study's arms never make it a new job.
    """
    name = environment_name(wildcards)
    engines = {
        arm["engine"] for arm in config["arms"].values() if arm.get("env") == name
    }
    engines |= {
        TOOL_METHODS[spec["method"]]
        for spec in config["builds"].values()
        if spec.get("env") == name and spec["method"] in TOOL_METHODS
    }
    return {engine: ENGINES[engine].import_statement for engine in sorted(engines)}


def arm_environments(arm_names):
    """The environment records the arms' processes need (none for the main environment)."""
    names = sorted({config["arms"][a].get("env") for a in arm_names} - {None})
    return [f"{ENVS_DIR}/{ENVIRONMENT_DIGESTS[n]}/environment.json" for n in names]


def get_study_environments(wildcards):
    return arm_environments(list(config["arms"]))


def get_environments_ready(wildcards):
    """The gate every measuring job waits behind (nothing when no arm names an environment)."""
    return ancient(f"{RESULTS}/envs/ready.json") if ENVIRONMENT_DIGESTS else []


def get_chart_table(wildcards):
    return f"{RESULTS}/tables/{CHART_TABLES[wildcards.name]}.parquet"


def get_build_environments(wildcards):
    """The environment a converter's build runs in (openvino, ortgenai), none for the others."""
    name = config["builds"].get(wildcards.build, {}).get("env")
    return [f"{ENVS_DIR}/{ENVIRONMENT_DIGESTS[name]}/environment.json"] if name else []


def get_arm_environments(wildcards):
    return arm_environments([f"{wildcards.engine}/{wildcards.label}"])


def get_session_environments(wildcards):
    return arm_environments(session_arms(config))


def fidelity_arms():
    return [name for name, arm in config["arms"].items() if arm["fidelity"]]


def build_json(build):
    return f"{RESULTS}/models/{build}/build.json"


def get_arm_build_json(wildcards):
    return build_json(config["arms"][f"{wildcards.engine}/{wildcards.label}"]["build"])


def get_previous_rep(wildcards):
    """The rep scheduled just before this one, so reps run in the rotated order, one at a time."""
    arm = f"{wildcards.engine}/{wildcards.label}"
    _, before = study_slot(config, wildcards.study, arm, int(wildcards.rep))
    return (
        [] if before is None else [rep_path(wildcards.study, before.arm, before.round)]
    )


def get_rep_slot(wildcards):
    """The rep's place in the rotated schedule, computed once here and passed as a param."""
    arm = f"{wildcards.engine}/{wildcards.label}"
    slot, _ = study_slot(config, wildcards.study, arm, int(wildcards.rep))
    return {
        "round": slot.round,
        "order_position": slot.order_position,
        "sequence": slot.sequence,
    }


def get_earlier_reps(wildcards):
    """This arm's earlier reps in the same study: the straggler rule compares against them."""
    arm = f"{wildcards.engine}/{wildcards.label}"
    return [rep_path(wildcards.study, arm, r) for r in range(int(wildcards.rep))]


def get_study_reps(wildcards):
    arms, rounds = study_plan(config, wildcards.study)
    return [rep_path(wildcards.study, arm, r) for arm in arms for r in range(rounds)]


def get_session_build_jsons(wildcards):
    """One build.json per build the warm session's arms load."""
    builds = sorted({config["arms"][arm]["build"] for arm in session_arms(config)})
    return [build_json(build) for build in builds]


def get_warm_sessions(wildcards):
    """Every independent warm session's samples (bench.warm_sessions)."""
    sessions = range(config["bench"]["warm_sessions"])
    return [f"{RESULTS}/raw/warm/session{s}.parquet" for s in sessions]


def get_crosscheck_build_json(wildcards):
    return build_json(config["arms"][config["crosscheck"]["arm"]]["build"])


def get_pilot_build_json(wildcards):
    return build_json(config["arms"][config["pilot"]["arm"]]["build"])


def get_injected_effects(wildcards):
    """Configured throughput loss of each injected calibration arm."""
    return {
        arm: config["arms"][arm]["inject_slowdown"]
        for arm in config["calibration"]["injected"]
    }


def get_fidelity_rows(wildcards):
    return [f"{RESULTS}/raw/fidelity/{arm}/summary.parquet" for arm in fidelity_arms()]


def get_fidelity_positions(wildcards):
    return [
        f"{RESULTS}/raw/fidelity/{arm}/positions.parquet" for arm in fidelity_arms()
    ]


def get_build_spec(wildcards):
    return config["builds"][wildcards.build]


def rep_path(study, arm, rep):
    return f"{RESULTS}/raw/{study}/{arm}/rep{rep}.parquet"


# The checker baselines' rows: one file for every policy, whatever the model.
AGENT_BASELINES = f"{RESULTS}/raw/agent/baselines.parquet"


def agent_trials_path(arm):
    return f"{RESULTS}/raw/agent/{MODEL}/{arm}/trials.parquet"


def get_agent_inputs(wildcards):
    arms = config.get("agent", {}).get("arms", [])
    return [AGENT_BASELINES] + [agent_trials_path(arm) for arm in arms]


def get_agent_reference_arm(wildcards):
    return config["agent"]["arms"][0]


def get_item(wildcards):
    return ITEMS[wildcards.item]


def get_item_inputs(wildcards):
    """Exactly the raw rows an item's verdict needs (edgebench.tables: the table's `raw` kind)."""
    item = ITEMS[wildcards.item]
    if not reproducible(item):
        return []
    name, arms = item["starts_from"]["table"], item["starts_from"]["arms"]
    raw = TABLES[name].raw
    if raw == "reps":
        study_arms, rounds = study_plan(config, name)
        missing = [a for a in arms if a not in study_arms]
        if missing:
            raise ConfigError(
                f"roadmap item {item['id']}: arms {missing} are not in the {name} study"
            )
        return [rep_path(name, arm, r) for arm in arms for r in range(rounds)]
    if raw == "fidelity_summaries":
        return [f"{RESULTS}/raw/fidelity/{arm}/summary.parquet" for arm in arms]
    if raw == "agent_trials":  # the checker baselines share one file
        paths = [agent_trials_path(a) for a in arms if not a.startswith("baseline/")]
        if any(a.startswith("baseline/") for a in arms):
            paths.append(AGENT_BASELINES)
        return paths
    if raw == "check":
        return [f"{RESULTS}/checks/{name}.txt"]
    return [f"{RESULTS}/tables/{name}.parquet"]


def get_verdict_tables(wildcards):
    return [f"{RESULTS}/items/{item}/verdict.parquet" for item in ITEMS]


def get_retraction_tables(wildcards):
    """Joined tables that retractions can name (their retracted rows' figures are searched for)."""
    made = {table.name for table in study_tables(SECTIONS_MADE)}
    return [f"{RESULTS}/tables/{name}.parquet" for name in RETRACTABLE if name in made]


def get_build_jsons(wildcards):
    return [build_json("reference")] + [build_json(b) for b in config["builds"]]


def memory_arms():
    """Arms whose memory is attributed: the configured list, else every benchmarked arm."""
    chosen = config["diagnostics"]["memory_arms"]  # validated against config.arms
    if chosen is None:
        return [name for name, arm in config["arms"].items() if arm["bench"]]
    return chosen


def profile_arms():
    """Arms whose decode step is profiled: the configured list, else every benchmarked arm whose
    engine has the decode profile (edgebench.engines.registry)."""
    chosen = config["diagnostics"]["profile_arms"]
    if chosen is None:
        return [
            n
            for n, a in config["arms"].items()
            if a["bench"] and not check_feature("profile_arms", n, a, "decode_profile")
        ]
    return chosen


def get_decode_profiles(wildcards):
    return [f"{RESULTS}/raw/profile/{arm}.parquet" for arm in profile_arms()]


def get_memory_ledgers(wildcards):
    return [f"{RESULTS}/raw/memory/{arm}.parquet" for arm in memory_arms()]


def decision_requirements():
    """The study's budget (none: no decision is made)."""
    return config["requirements"] if "requirements" in config else {}


def runs_in_study(name):
    """An arm this study measures somewhere: cold reps, fidelity or agent trials."""
    arm = config["arms"][name]
    return (
        arm["bench"]
        or arm["fidelity"]
        or name in config.get("agent", {}).get("arms", [])
    )


def decision_arms():
    """The user's deployable builds that this study runs: every arm but the calibration twin and
    injected arms, and the emulations (they exist for a fidelity item)."""
    cal = config.get("calibration") or {}
    calibration = {cal.get("twin"), *cal.get("injected", [])}
    return [
        a
        for a, arm in config["arms"].items()
        if a not in calibration and not arm.get("w4a8_emulated") and runs_in_study(a)
    ]


def decision_other_arms():
    """Arms judged against the budget for reference only, in a section of their own."""
    return [
        a
        for a, arm in config["arms"].items()
        if arm.get("w4a8_emulated") and runs_in_study(a)
    ]


def get_decision_inputs(wildcards):
    """The tables the requirements' metrics come from."""
    from edgebench.metrics import METRICS

    needed = {METRICS[m].table for m in config.get("requirements", {})}
    if not config.get("agent"):
        needed.discard("agent_trials")
    if "peak_rss_anon_mb" in config.get("requirements", {}):
        needed.add("builds")  # what a memory cell that is not met splits into
    return {t: f"{RESULTS}/tables/{t}.parquet" for t in sorted(needed | {"bench"})}


def get_findings_inputs(wildcards):
    inputs = {
        t: f"{RESULTS}/tables/{t}.parquet"
        for t in ("bench", "warm", "fidelity", "compare", "warm_noise", "machine")
    }
    if ITEMS:
        inputs["verdicts"] = f"{RESULTS}/tables/verdicts.parquet"
    if config.get("requirements"):
        inputs["decision_md"] = f"{RESULTS}/decision.md"
    return inputs


def get_across_inputs(wildcards):
    """What a study is compared and remembered by: its measured tables, its paired ratios, its
    machine fingerprint and builds (edgebench.crossstudy reads the results folder)."""
    names = ("warm", "bench", "fidelity", "compare", "machine", "builds")
    return {name: f"{RESULTS}/tables/{name}.parquet" for name in names}


def first_page():
    """The report's description: the study's own first page once written (an absolute path, as
    the directive reads paths beside the Snakefile), else the fixed one."""
    written = Path(REPORT_PAGE).resolve()
    return str(written) if written.exists() else "report/workflow.rst"


def get_report_page_inputs(wildcards):
    inputs = {"findings": f"{RESULTS}/findings.md"}
    if "requirements" in SECTIONS_MADE:
        inputs["decision"] = f"{RESULTS}/tables/decision.parquet"
    return inputs


def get_final_output():
    """Every table the study makes (edgebench.tables), the charts drawn from them, and the checks."""
    tables = study_tables(SECTIONS_MADE)
    charts = [
        f"{RESULTS}/charts/{chart}.{ext}"
        for table in tables
        for chart in table.charts
        for ext in ("png", "svg", "html")
    ]
    checks = [
        f"{RESULTS}/checks/retracted_figures.txt",
        f"{RESULTS}/findings.md",
        REPORT_PAGE,
    ]
    if "requirements" in SECTIONS_MADE:
        checks.append(f"{RESULTS}/decision.md")
    if config["history"] != "none":
        checks.append(f"{RESULTS}/checks/history.txt")
    if config["compare_with"]:
        checks.append(f"{RESULTS}/compare/compare_studies.md")
    return (
        [f"{RESULTS}/tables/{table.name}.parquet" for table in tables] + charts + checks
    )
