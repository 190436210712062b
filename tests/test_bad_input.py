"""Bad input is refused before any job runs, with one line that names the bad key and value, and
nothing already computed is touched."""

import copy
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgebench.config import ConfigError, read_config_file, validate_config
from edgebench.items.roadmap import validate_roadmap
from edgebench.retractions import load_retractions
from edgebench.tables import TABLE_COLUMNS

from .conftest import ROOT, set_at

GOOD = yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text())
ROADMAP = yaml.safe_load((ROOT / ".test" / "config" / "roadmap.yaml").read_text())
ITEM_IDS = {item["id"] for item in ROADMAP["items"]}
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def leaves(value, path=()):
    """(path, value) of every scalar in a nested mapping."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, (*path, key))
    elif not isinstance(value, list):
        yield path, value


TYPED_LEAVES = [(p, v) for p, v in leaves(GOOD) if isinstance(v, int | float) and p[0] != "run_id"]
SECTIONS = [k for k, v in GOOD.items() if isinstance(v, dict) and k not in ("arms", "builds")]


def refused(call) -> str:
    with pytest.raises(ConfigError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message  # one line
    return message


@FAST
@given(st.sampled_from(TYPED_LEAVES), st.sampled_from(["many", [1, 2], {"x": 1}]))
def test_a_wrong_type_anywhere_is_refused_naming_key_and_value(leaf, wrong):
    path, _ = leaf
    message = refused(lambda: validate_config(set_at(GOOD, path, wrong)))
    assert ".".join(map(str, path)) in message or str(path[-1]) in message, message
    assert repr(wrong)[:10] in message or str(wrong)[:10] in message, message


@FAST
@given(st.sampled_from(SECTIONS), st.from_regex(r"[a-z]{3,10}_typo", fullmatch=True))
def test_an_unknown_key_is_refused_by_name(section, key):
    message = refused(lambda: validate_config(set_at(GOOD, (section, key), 1)))
    assert key in message and section in message, message


@FAST
@given(st.integers(8, 200).filter(lambda g: 256 % g or 512 % g))
def test_a_group_size_that_does_not_tile_the_model_is_refused(group):
    message = refused(lambda: validate_config(set_at(GOOD, ("builds", "gptq-w4g64", "group_size"), group)))
    assert f"config.builds.gptq-w4g64.group_size: {group} does not divide" in message, message
    assert "hidden_size 256" in message or "intermediate_size 512" in message


def test_group_sizes_are_read_from_the_shipped_models_gguf_header():
    real = {**GOOD, "model": yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["model"]}
    message = refused(lambda: validate_config(set_at(real, ("builds", "gptq-w4g64", "group_size"), 40)))
    assert "hidden_size 576" in message and "intermediate_size 1536" in message


@FAST
@given(
    st.one_of(
        st.builds(
            lambda t: {"table": t, "where": {"arm": "vllm/bf16"}},
            st.from_regex(r"[a-z]{3,8}h", fullmatch=True),
        ),
        st.builds(
            lambda c: {"table": "bench", "where": {c: 1}}, st.from_regex(r"[a-z]{4,8}_col", fullmatch=True)
        ),
        st.builds(lambda i: {"item": i}, st.from_regex(r"[A-Z][0-9]{2,3}x", fullmatch=True)),
    )
)
def test_a_retraction_of_nothing_is_refused_by_name(tmp_path_factory, target):
    entry = {"id": "R9", "reason": "r", "date": "2026-11-30", "replaced_by": "x", **target}
    path = tmp_path_factory.mktemp("r") / "retractions.yaml"
    path.write_text(yaml.safe_dump({"retractions": [entry]}))
    message = refused(lambda: load_retractions(path, ITEM_IDS))
    named = target.get("table") if target.get("table") not in TABLE_COLUMNS else None
    named = named or target.get("item") or next(iter(target.get("where", {})))
    assert named in message, message


@FAST
@given(
    st.sampled_from([i for i, item in enumerate(ROADMAP["items"]) if "verify" in item]),
    st.sampled_from(
        [
            (("starts_from", "table"), "benchh"),
            (("verify", "method"), "eyeball"),
            (("expect", "direction"), "sideways"),
            (("starts_from", "arms"), ["vllm/nope"]),
        ]
    ),
)
def test_a_broken_roadmap_item_is_refused_by_name(index, change):
    (section, key), value = change
    roadmap = copy.deepcopy(ROADMAP)
    roadmap["items"][index][section][key] = value
    message = refused(lambda: validate_roadmap(roadmap, GOOD["arms"]))
    assert str(value if not isinstance(value, list) else value[0]) in message, message


def test_yaml_errors_name_file_and_line_and_a_list_is_not_a_config(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("bench:\n  warm_rounds: [1, 2\n  decode_tokens: 64\n")
    assert refused(lambda: read_config_file(bad)).startswith(f"{bad}:3:")
    listed = tmp_path / "list.yaml"
    listed.write_text("- bench\n- arms\n")
    assert "expected a mapping" in refused(lambda: read_config_file(listed))


@pytest.mark.workflow
@pytest.mark.parametrize(
    "case",
    ["yaml_overlay", "retraction_table", "group_size"],
)
def test_the_workflow_refuses_bad_input_before_touching_results(tmp_path, case):
    workdir = tmp_path / "study"
    shutil.copytree(ROOT / ".test" / "config", workdir / "config")
    done = workdir / "results" / "tables" / "bench.parquet"
    done.parent.mkdir(parents=True)
    done.write_bytes(b"computed earlier")
    extra = []
    if case == "yaml_overlay":
        (workdir / "config" / "overlay.yaml").write_text("bench:\n  warm_rounds: [1, 2\n")
        extra = ["--config", "overlays=config/overlay.yaml"]
    elif case == "retraction_table":
        entry = {
            "id": "R1",
            "table": "benchh",
            "where": {"arm": "x"},
            "reason": "r",
            "date": "d",
            "replaced_by": "x",
        }
        (workdir / "config" / "retractions.yaml").write_text(yaml.safe_dump({"retractions": [entry]}))
    else:
        config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
        config["builds"]["gptq-w4g64"]["group_size"] = 40
        (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    before = sorted(p.relative_to(workdir) for p in (workdir / "results").rglob("*"))
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile"),
         "--directory", str(workdir), "--cores", "1", *extra],
        capture_output=True, text=True, env={**os.environ}, timeout=600,
    )  # fmt: skip
    assert run.returncode != 0
    expected = {
        "yaml_overlay": "config/overlay.yaml:3:1: not valid YAML",
        "retraction_table": "'benchh'",
        "group_size": "group_size: 40",
    }
    assert expected[case] in run.stdout + run.stderr
    assert sorted(p.relative_to(workdir) for p in (workdir / "results").rglob("*")) == before
    assert done.read_bytes() == b"computed earlier"


# --- inputs that used to be accepted silently: each class refused in one line naming key and value


@FAST
@given(st.sampled_from(["bench", "gates", "arms"]))
def test_a_key_given_twice_in_one_file_is_refused_with_its_line(tmp_path_factory, section):
    path = tmp_path_factory.mktemp("dup") / "study.yaml"
    text = (ROOT / ".test" / "config" / "config.yaml").read_text()
    if section == "arms":  # the same arm twice inside arms:
        text = text.replace("arms:\n", "arms:\n  hf/bf16:\n    engine: hf\n    build: reference\n", 1)
        key = "hf/bf16"
    else:
        text += f"{section}:\n  {next(iter(GOOD[section]))}: 1\n"
        key = section
    message = refused(lambda: read_config_file(path.write_text(text) and path))
    assert message.startswith(f"{path}:") and f"key {key!r} given twice" in message, message


NAN_KEYS = [
    ("gates", "tolerance"),
    ("bench", "contention_limit"),
    ("arms", "vllm/bf16-slow", "inject_slowdown"),
]


@FAST
@given(st.sampled_from(NAN_KEYS), st.sampled_from([float("nan"), float("inf"), float("-inf")]))
def test_nan_and_infinities_are_refused_naming_the_key(path, value):
    message = refused(lambda: validate_config(set_at(GOOD, path, value)))
    assert ".".join(path) in message and str(value) in message, message


@FAST
@given(
    st.sampled_from([("gates", "tolerance"), ("verify", "tolerance"), ("expect", "threshold")]),
    st.sampled_from([float("nan"), float("inf")]),
)
def test_nan_in_a_roadmap_is_refused_naming_the_key(where, value):
    roadmap = copy.deepcopy(ROADMAP)
    item = next(i for i in roadmap["items"] if i.get("verify", {}).get("method") == "paired_ratio")
    item.setdefault(where[0], {})[where[1]] = value
    message = refused(lambda: validate_roadmap(roadmap, GOOD["arms"]))
    assert where[1] in message and str(value) in message, message


@FAST
@given(
    st.sampled_from([("bench", "rounds"), ("bench", "warm_rounds"), ("agent", "trials")]),
    st.integers(min_value=401, max_value=10**12),
)
def test_counts_above_their_documented_maximum_are_refused(path, count):
    message = refused(lambda: validate_config(set_at(GOOD, path, count)))
    assert ".".join(path) in message and str(count) in message and "maximum" in message, message


@FAST
@given(st.integers(min_value=2, max_value=63))
def test_cores_that_do_not_exist_and_threads_above_the_cores_are_refused(extra):
    from edgebench.config import check_machine

    config = validate_config(GOOD)
    cores = [0, 1]
    message = refused(lambda: check_machine(set_at(config, ("bench", "cpus"), [0, extra]), cores))
    assert "config.bench.cpus" in message and str(extra) in message, message
    arm = ("arms", "hf/bf16", "threads")
    message = refused(lambda: check_machine(set_at(config, arm, extra + 1), cores))
    assert "config.arms.hf/bf16.threads" in message and f"{extra + 1} threads on 2" in message, message
    check_machine(config, cores)  # the shipped test study fits two cores


@FAST
@given(st.integers(min_value=2, max_value=63))
def test_a_bound_core_or_an_openmp_thread_count_beyond_the_usable_cores_is_refused(extra):
    from edgebench.config import check_machine

    config = validate_config(GOOD)
    cores = [0, 1]
    bind = ("arms", "vllm/bf16", "threads_bind")
    message = refused(lambda: check_machine(set_at(config, bind, f"0-{extra}"), cores))
    assert "config.arms.vllm/bf16.threads_bind" in message and f"0-{extra}" in message, message
    message = refused(
        lambda: check_machine(set_at(config, ("diagnostics", "omp_threads"), [1, extra + 1]), cores)
    )
    assert "config.diagnostics.omp_threads[1]" in message and f"{extra + 1} threads on 2" in message, message
    check_machine(set_at(config, bind, "0-1"), cores)


def test_a_threads_bind_that_is_no_core_list_is_refused_naming_it():
    from edgebench.config import check_machine

    config = set_at(validate_config(GOOD), ("arms", "vllm/bf16", "threads_bind"), "zero-one")
    message = refused(lambda: check_machine(config, [0, 1]))
    assert "threads_bind" in message and "'zero-one'" in message, message


@pytest.mark.parametrize("folder", ["results/..", "results/../..", "results/./x", "results/a/../../src"])
def test_a_results_folder_outside_results_is_refused(folder):
    message = refused(lambda: validate_config(set_at(GOOD, ("results_dir",), folder)))
    assert "config.results_dir" in message and folder in message, message


def test_a_roadmap_metric_typo_and_a_fidelity_item_on_an_unscored_arm_are_refused():
    roadmap = copy.deepcopy(ROADMAP)
    item = next(i for i in roadmap["items"] if i["starts_from"]["table"] == "fidelity")
    item["starts_from"]["metric"] = "kl_meen"
    message = refused(lambda: validate_roadmap(roadmap, GOOD["arms"]))
    assert "'kl_meen'" in message and item["id"] in message, message
    roadmap = copy.deepcopy(ROADMAP)
    item = next(i for i in roadmap["items"] if i["starts_from"]["table"] == "fidelity")
    item["starts_from"]["arms"] = ["hf/bf16"]  # fidelity: false in the test study
    message = refused(lambda: validate_roadmap(roadmap, GOOD["arms"]))
    assert "hf/bf16" in message and "fidelity: false" in message, message


def test_study_and_overlay_paths_are_named_when_missing_a_folder_or_wrong(tmp_path):
    from edgebench.config import study_config

    base = ROOT / ".test" / "config" / "config.yaml"
    missing = tmp_path / "missing.yaml"
    assert str(missing) in refused(lambda: study_config(base, {"study": str(missing)}))
    assert "is a folder" in refused(lambda: study_config(base, {"study": str(tmp_path)}))
    assert "is a folder" in refused(lambda: study_config(base, {"overlays": str(tmp_path)}))
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("bench:\n  warm_roundz: 4\n")
    message = refused(lambda: study_config(base, {"overlays": str(overlay)}))
    assert message.startswith(f"{overlay}:") and "warm_roundz" in message, message


@pytest.mark.parametrize(
    ("requirement", "named"),
    [
        ({"decode_tok_z": {"at_least": 1}}, "decode_tok_z"),
        ({"decode_tok_s": {"at_least": 1, "at_most": 2}}, "decode_tok_s"),
        ({"kl_mean": {"below": 0.1}}, "below"),
        ({"top1": {"at_least": float("nan")}}, "nan"),
    ],
)
def test_a_bad_requirement_is_refused_naming_it(requirement, named):
    message = refused(lambda: validate_config({**GOOD, "requirements": requirement}))
    assert "requirements" in message and named in message, message


def test_an_alternating_loss_without_a_loss_is_refused_naming_the_arm():
    twin = set_at(GOOD, ("arms", "vllm/bf16-twin", "inject_alternate"), True)
    message = refused(lambda: validate_config(twin))
    assert "vllm/bf16-twin" in message and "inject_slowdown" in message
    slow = set_at(GOOD, ("arms", "vllm/bf16-slow", "inject_alternate"), True)
    assert validate_config(slow)["arms"]["vllm/bf16-slow"]["inject_alternate"] is True


@pytest.mark.parametrize("key", ["inject_slowdown", "inject_alternate"])
def test_a_loss_on_an_engine_that_cannot_inject_it_is_refused_naming_the_arm(key):
    value = 0.05 if key == "inject_slowdown" else True
    hf = set_at(GOOD, ("arms", "hf/bf16", key), value)
    message = refused(lambda: validate_config(hf))
    assert "hf/bf16" in message and "inject_slowdown" in message and "'hf'" in message, message
