import pytest
import yaml

from edgebench.config import ConfigError, load_config, validate_config

from .conftest import ROOT


def test_shipped_configs_validate_and_get_defaults(default_config):
    checked = validate_config(default_config)
    assert checked["arms"]["vllm/bf16"]["kv_cache_gib"] == 1
    assert checked["bench"]["timeout_s"] > 0
    assert load_config(ROOT / ".test" / "config" / "config.yaml")["run_id"]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda c: c["bench"].update(rounds=0), "config.bench.rounds"),
        (lambda c: c["bench"].update(roundz=3), "roundz"),
        (lambda c: c["arms"]["vllm/bf16"].update(kv_cache_gib=-1), "config.arms.vllm/bf16.kv_cache_gib"),
        (lambda c: c["builds"]["gptq-w4g64"].update(bits=3), "config.builds.gptq-w4g64.bits"),
        (lambda c: c.pop("fidelity"), "fidelity"),
        (lambda c: c["arms"].update({"tensorrt/x": {"engine": "vllm", "build": "reference"}}), "tensorrt/x"),
        (lambda c: c["bench"].update(restart_rounds=-1), "config.bench.restart_rounds"),
        (lambda c: c["bench"].update(warm_design="duet", restart_rounds=3), "config.bench.restart_rounds: 3"),
    ],
)
def test_schema_errors_name_the_key(default_config, edit, named):
    edit(default_config)
    with pytest.raises(ConfigError) as error:
        validate_config(default_config)
    assert named in str(error.value)


def test_arm_must_name_a_known_build(default_config):
    default_config["arms"]["vllm/bf16"]["build"] = "gptq-w4g32"
    with pytest.raises(ConfigError, match="gptq-w4g32"):
        validate_config(default_config)


def test_not_yaml_and_not_a_mapping_are_clear(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("run_id: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text(yaml.safe_dump(["a", "list"]))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


def test_defaults_reach_into_lists(default_config):
    default_config["bench"]["faults"] = [{"arm": "vllm/bf16", "rep": 1, "kind": "crash"}]
    fault = validate_config(default_config)["bench"]["faults"][0]
    assert fault["study"] == "bench" and fault["memory_limit_mb"] == 1024


def test_memory_arms_must_be_arms(default_config):
    default_config["diagnostics"] = {"memory_arms": ["vllm/bf16", "llamacpp/nope"]}
    with pytest.raises(ConfigError, match="llamacpp/nope"):
        validate_config(default_config)


STUDIES = sorted(
    p.name for p in (ROOT / "config").glob("*.yaml") if "run_id" in yaml.safe_load(p.read_text())
)


@pytest.mark.parametrize("study", STUDIES)
def test_every_shipped_study_validates_with_its_own_roadmap(study):
    from edgebench.items.roadmap import load_roadmap

    config = load_config(ROOT / "config" / study, read_model=False)  # model packages: make setup-models
    if config["roadmap"] != "none":  # a study without items says so; a named file must exist
        assert load_roadmap(ROOT / config["roadmap"], config["arms"])


def compiled_study() -> dict:
    """The compiled study as composed over its base, before validation."""
    from edgebench.config import compose, study_sources

    config: dict = {}
    for _, raw in study_sources(ROOT / "config" / "compiled.yaml"):
        config = compose(config, raw)
    return config


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda c: c["arms"]["vllm/bf16-compiled"].update(enforce_eager=True), "enforce_eager false"),
        (lambda c: c["arms"]["vllm/bf16-compiled"].update(kv_cache_gib=2), "must match 'vllm/bf16'"),
        (
            lambda c: c["arms"]["vllm/bf16-compiled"].update(bench=False) or c["bench"].pop("warm_pairs"),
            "config.compiled.compiled",
        ),
        (lambda c: c["compiled"].update(eager="vllm/nope"), "'vllm/nope'"),
        (lambda c: c["bench"].update(warm_pairs=[["vllm/bf16", "vllm/bf16-twin"]]), "warm"),
    ],
)
def test_the_compiled_comparison_needs_twin_arms_paired_in_the_warm_session(edit, named):
    config = compiled_study()
    config["arms"]["vllm/bf16-twin"] = {"engine": "vllm", "build": "reference"}
    edit(config)
    with pytest.raises(ConfigError, match=named):
        validate_config(config)


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    else:
        yield path, value


def _at(tree, path):
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return KeyError
        tree = tree[key]
    return tree


EXTENDING = [s for s in STUDIES if "extends" in yaml.safe_load((ROOT / "config" / s).read_text())]


def test_every_shipped_study_but_the_default_builds_on_another():
    assert set(STUDIES) - set(EXTENDING) == {"config.yaml"}


@pytest.mark.parametrize("study", EXTENDING)
def test_a_study_that_extends_its_base_states_only_what_differs(study):
    from edgebench.config import read_config_file

    raw = read_config_file(ROOT / "config" / study)
    base = load_config(ROOT / raw["extends"], read_model=False)  # model packages: make setup-models
    restated = [
        ".".join(map(str, path))
        for path, value in _leaves({k: v for k, v in raw.items() if k not in ("extends", "replace")})
        if path[0] not in raw.get("replace", []) and _at(base, path) == value
    ]
    assert not restated, f"{study} restates its base: {restated}"


def test_extends_and_replace_compose_and_a_cycle_is_refused(tmp_path):
    from edgebench.config import study_sources

    base = tmp_path / "base.yaml"
    base.write_text((ROOT / ".test" / "config" / "config.yaml").read_text())
    child = tmp_path / "child.yaml"
    composed = yaml.safe_load(base.read_text())
    composed.pop("calibration")
    composed.pop("crosscheck")
    composed.pop("agent")
    composed.pop("diagnostics")
    child.write_text(
        f"extends: {base}\nreplace: [arms, calibration, crosscheck, agent, diagnostics]\nrun_id: child\n"
        "arms:\n  vllm/bf16: {engine: vllm, build: reference}\nbench: {warm_rounds: 4}\n"
    )
    config = load_config(child)
    assert config["run_id"] == "child" and list(config["arms"]) == ["vllm/bf16"]
    assert config["bench"]["warm_rounds"] == 4 and config["bench"]["rounds"] == composed["bench"]["rounds"]
    assert "calibration" not in config and set(config["builds"]) == set(composed["builds"])
    assert [name for name, _ in study_sources(child)] == [str(base), str(child)]
    loop = tmp_path / "loop.yaml"
    loop.write_text(f"extends: {loop}\nrun_id: x\n")
    with pytest.raises(ConfigError, match="extends itself"):
        load_config(loop)
