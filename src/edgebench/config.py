"""Load and validate a study config; every error names the offending key and value."""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import re
from pathlib import Path

import jsonschema
import yaml

from edgebench.engines.registry import ENGINES, TOOL_METHODS, can_load, check_feature
from edgebench.envs.spec import requirement_problem
from edgebench.metrics import BUDGET_METRICS, METRICS

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "config.schema.yaml"  # package data


class ConfigError(ValueError):
    """A config that does not match the schema or breaks a cross-field rule."""


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    """The schema, with the engine names filled in from the engine registry."""
    schema = yaml.safe_load(path.read_text())
    arms = schema["properties"]["arms"]
    arms["propertyNames"]["pattern"] = f"^({'|'.join(ENGINES)})/[A-Za-z0-9_.-]+$"
    arms["additionalProperties"]["properties"]["engine"]["enum"] = list(ENGINES)
    schema["properties"]["requirements"]["propertyNames"]["enum"] = list(BUDGET_METRICS)
    return schema


def _where(error: jsonschema.ValidationError, root: str) -> str:
    return root + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


def schema_errors(value: object, schema: dict, root: str) -> str:
    """One line naming each key that breaks the schema and why ("" when none does)."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    shown = [f"{_where(e, root)}: {e.message[:200]}" for e in errors[:3]]
    more = f"; and {len(errors) - 3} more" if len(errors) > 3 else ""
    return "; ".join(shown) + more


def _fill_defaults(schema: dict, value: object) -> None:
    """Put schema defaults into the config so code reads one source of truth."""
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _fill_defaults(schema["items"], item)
        return
    if not isinstance(value, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in value and "default" in sub:
            value[key] = copy.deepcopy(sub["default"])
        if key in value:
            _fill_defaults(sub, value[key])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, item in value.items():
            if key not in schema.get("properties", {}):
                _fill_defaults(extra, item)


def validate_config(config: dict, schema: dict | None = None, read_model: bool = True) -> dict:
    """Validated copy of the config with defaults filled; raises ConfigError naming the key."""
    schema = schema or load_schema()
    check_finite(config, "config")
    problems = schema_errors(config, schema, "config")
    if problems:
        raise ConfigError(f"invalid config: {problems}")
    checked = copy.deepcopy(config)
    _fill_defaults(schema, checked)
    with_engine_environments(checked)
    check_cross_fields(checked, read_model)
    return checked


def model_widths(model: dict) -> dict[str, int]:
    """The reference model's layer widths, read from its config or its GGUF header; a model that
    cannot be read (missing, truncated, garbage, a package not installed) is refused here."""
    if model["kind"] == "tiny_random":
        return {"hidden_size": model["hidden_size"], "intermediate_size": model["intermediate_size"]}
    from edgebench.models.local import ModelFileError
    from edgebench.models.source import model_summary

    try:
        summary = model_summary(model)
    except (ModelFileError, FileNotFoundError, ValueError, ImportError) as error:  # e.g. package ''
        raise ConfigError(f"config.model: {error}") from None
    if model["kind"] == "hf_dir" and summary.get("quantization"):
        raise ConfigError(
            f"config.model.path: {model['path']} is a {summary['quantization']} checkpoint; the reference "
            "must be the unquantized model"
        )
    return {k: summary[k] for k in ("hidden_size", "intermediate_size")}


def check_group_sizes(config: dict) -> None:
    """A quantization group must tile every layer width it quantizes, or the build fails late."""
    grouped = {n: s for n, s in config["builds"].items() if s.get("group_size", -1) > 0}
    widths = model_widths(config["model"])  # read even without groups: an unreadable model stops here
    for name, spec in grouped.items():
        bad = {k: w for k, w in (widths or {}).items() if w % spec["group_size"]}
        if bad:
            shown = ", ".join(f"{k} {w}" for k, w in bad.items())
            raise ConfigError(
                f"config.builds.{name}.group_size: {spec['group_size']} does not divide the model's {shown}"
            )


def check_existing(name: str, spec: dict) -> None:
    """An existing checkpoint must be there and readable before any job."""
    from edgebench.models.local import ModelFileError, gguf_summary, hf_dir_summary

    if "path" not in spec:
        raise ConfigError(f"config.builds.{name}: method existing needs a path")
    try:
        (gguf_summary if spec["path"].endswith(".gguf") else hf_dir_summary)(spec["path"])
    except ModelFileError as error:
        raise ConfigError(f"config.builds.{name}.path: {error}") from None


def load_method(spec: dict) -> str:
    """The method an engine must be able to load: an existing GGUF loads as a gguf build."""
    if spec["method"] == "existing":
        return "gguf" if spec["path"].endswith(".gguf") else "existing"
    return spec["method"]


# Weight bits each method makes (4 and 8 where not listed).
BUILD_BITS = {"openvino": (4, 8, 16), "ortgenai": (4, 8, 32), "gguf": (4, 8), "existing": (4, 8)}


def with_engine_environments(config: dict) -> dict:
    """An arm of an engine that has an environment of its own (the registry's) runs there unless it
    names one; a converter's build runs in its engine's. The engine's environment joins
    config.environments unless the study defines that name itself."""
    environments = config.setdefault("environments", {})
    named = [
        arm
        for arm in config["arms"].values()
        if ENGINES.get(arm["engine"]) and ENGINES[arm["engine"]].environment
    ]
    for arm in named:
        arm.setdefault("env", arm["engine"])
    for spec in config["builds"].values():
        if spec.get("method") in TOOL_METHODS:
            spec.setdefault("env", TOOL_METHODS[spec["method"]])
    wanted = {arm.get("env") for arm in config["arms"].values()} | {
        s.get("env") for s in config["builds"].values()
    }
    for name in sorted(wanted - {None} - set(environments)):
        if name in ENGINES and ENGINES[name].environment:
            environments[name] = {"needs_flags": [], **copy.deepcopy(ENGINES[name].environment)}
    return config


def check_builds(config: dict, read_model: bool = True) -> None:
    if read_model:
        check_group_sizes(config)
    for name, spec in config["builds"].items():
        if spec["method"] in ("gptq", "rtn") and "group_size" not in spec:
            raise ConfigError(f"config.builds.{name}: method {spec['method']} needs a group_size")
        if spec["method"] == "w8a8" and spec["bits"] != 8:
            raise ConfigError(f"config.builds.{name}: w8a8 has bits 8, not {spec['bits']}")
        if spec["method"] == "gguf" and "gguf_type" not in spec:
            raise ConfigError(f"config.builds.{name}: method gguf needs a gguf_type")
        if spec["method"] == "existing":
            check_existing(name, spec)
        allowed = BUILD_BITS.get(spec["method"], (4, 8))
        if spec["bits"] not in allowed:
            raise ConfigError(
                f"config.builds.{name}.bits: {spec['bits']} is not one method {spec['method']} makes "
                f"({', '.join(map(str, allowed))})"
            )
        if spec["method"] == "rtn" and spec["format"] == "gptq" and not spec["sym"]:
            raise ConfigError(
                f"config.builds.{name}: format gptq is symmetric only; use format compressed-tensors"
            )


def check_arms(config: dict) -> None:
    for name, arm in config["arms"].items():
        if arm["build"] != "reference" and arm["build"] not in config["builds"]:
            raise ConfigError(
                f"config.arms.{name}.build: {arm['build']!r} is neither 'reference' nor a key of "
                f"config.builds ({sorted(config['builds'])})"
            )
        if name.split("/", 1)[0] != arm["engine"]:
            raise ConfigError(f"config.arms.{name}: the name must start with its engine {arm['engine']!r}/")
        method = None if arm["build"] == "reference" else load_method(config["builds"][arm["build"]])
        if not can_load(arm["engine"], method):
            raise ConfigError(
                f"config.arms.{name}: engine {arm['engine']!r} cannot run build {arm['build']!r} "
                f"(it runs {ENGINES[arm['engine']].builds} builds)"
            )
        if arm.get("w4a8_emulated"):
            check_emulated(name, arm)
        check_injection(name, arm)
    if not any(arm["bench"] for arm in config["arms"].values()):
        raise ConfigError("config.arms: no arm has bench: true")


def usable_cores() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def bound_cores(value: str, key: str) -> list[int]:
    """The cores a VLLM_CPU_OMP_THREADS_BIND value names ('0-3', '0,2', '0-1|2-3'; none for
    'auto', 'nobind' and 'all')."""
    if value in ("auto", "nobind", "all"):
        return []
    cores = []
    for part in value.replace("|", ",").split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise ConfigError(f"config.{key}: {value!r} is not 'auto', 'nobind' or a core list like '0-1'")
        cores += range(int(low), int(high or low) + 1)
    return cores


def thread_counts(config: dict) -> dict[str, int]:
    """Every thread count a study's processes use, by config key."""
    counts = {f"arms.{n}.threads": a["threads"] for n, a in config["arms"].items() if "threads" in a}
    counts["fidelity.threads_per_arm"] = config["fidelity"]["threads_per_arm"]
    for i, t in enumerate(config["diagnostics"]["kernels"]["threads"]):
        counts[f"diagnostics.kernels.threads[{i}]"] = t
    for i, t in enumerate(config["diagnostics"].get("omp_threads", [])):
        counts[f"diagnostics.omp_threads[{i}]"] = t
    return counts


def check_machine(config: dict, cores: list[int] | None = None) -> None:
    """Cores that exist and thread counts that fit them: a rep pinned to a missing core runs
    elsewhere while its row records the core it was asked for."""
    cores = usable_cores() if cores is None else cores
    missing = sorted(set(config["bench"].get("cpus") or []) - set(cores))
    if missing:
        raise ConfigError(f"config.bench.cpus: cores {missing} do not exist here (usable: {cores})")
    for name, arm in config["arms"].items():
        named = bound_cores(arm.get("threads_bind", "auto"), f"arms.{name}.threads_bind")
        if sorted(set(named) - set(cores)):
            raise ConfigError(
                f"config.arms.{name}.threads_bind: {arm['threads_bind']!r} names cores "
                f"{sorted(set(named) - set(cores))} that are not usable here (usable: {cores})"
            )
    for key, threads in thread_counts(config).items():
        if threads > len(cores):
            raise ConfigError(f"config.{key}: {threads} threads on {len(cores)} usable cores")
    parts = config["results_dir"].split("/")
    if ".." in parts or "." in parts:
        raise ConfigError(
            f"config.results_dir: {config['results_dir']!r} leaves results/ (no '.' or '..' segments)"
        )


def check_metrics(config: dict) -> None:
    for name in [*config["gates"]["metrics"], config["bench"]["straggler_metric"]]:
        if name not in METRICS:
            raise ConfigError(f"config: metric {name!r} is not in the registry ({sorted(METRICS)})")
    if METRICS[config["bench"]["straggler_metric"]].measured != "cold":
        raise ConfigError(
            f"config.bench.straggler_metric: {config['bench']['straggler_metric']!r} is a warm metric; "
            "the straggler rule judges cold reps"
        )
    baseline = config["gates"]["baseline"]
    if baseline not in config["arms"] or not config["arms"][baseline]["bench"]:
        raise ConfigError(f"config.gates.baseline: {baseline!r} is not an arm with bench: true")


def check_warm_session(config: dict) -> None:
    session = [a for a, spec in config["arms"].items() if spec["bench"]]
    if config.get("calibration"):
        session += [config["calibration"]["twin"], *config["calibration"]["injected"]]
    for pair in config["bench"].get("warm_pairs") or []:
        outside = [a for a in pair if a not in session]
        if outside or pair[0] == pair[1]:
            raise ConfigError(
                f"config.bench.warm_pairs: {pair} must name two different arms of the warm session "
                f"({session})"
            )
    if config["bench"]["warm_design"] == "interleaved":
        for name in session:
            refuse(
                check_feature(
                    "config.bench.warm_design: interleaved", name, config["arms"][name], "interleave"
                )
            )
    cal = config.get("calibration")
    if cal and config["bench"]["warm_design"] == "duet" and cal["block_rounds"] % 2:
        raise ConfigError(
            f"config.calibration.block_rounds: {cal['block_rounds']} is odd; in duets a block holds whole "
            "swaps (two rounds, the arms on opposite cores), so it must be even"
        )
    restart = config["bench"]["restart_rounds"]
    if config["bench"]["warm_design"] == "duet" and restart % 2:
        raise ConfigError(
            f"config.bench.restart_rounds: {restart} is odd; in duets a swap's two rounds must run on "
            "the same engines, so it must be even"
        )


def refuse(problem: str | None) -> None:
    if problem:
        raise ConfigError(problem)


def check_emulated(name: str, arm: dict) -> None:
    refuse(check_feature(f"config.arms.{name}.w4a8_emulated", name, arm, "w4a8_emulated"))
    if not arm.get("int4_w4a8") or arm["bench"]:
        raise ConfigError(
            f"config.arms.{name}: w4a8_emulated needs int4_w4a8: true and bench: false "
            "(it emulates the W4A8 kernel's arithmetic; its timings are torch's, not the kernel's)"
        )


def check_injection(name: str, arm: dict) -> None:
    """An injected loss runs inside the engine's own process: only an engine that can inject it may
    carry one, or the study would time an arm without the loss it names."""
    if arm.get("inject_slowdown", 0) > 0 or arm.get("inject_alternate"):
        refuse(check_feature(f"config.arms.{name}.inject_slowdown", name, arm, "inject_slowdown"))
    if arm.get("inject_alternate") and not arm.get("inject_slowdown", 0) > 0:
        raise ConfigError(f"config.arms.{name}.inject_alternate: true needs inject_slowdown > 0")


def check_stage_arms(config: dict) -> None:
    check, arms = config.get("crosscheck"), config["arms"]
    uses = [("config.crosscheck.arm", check["arm"], "crosscheck")] if check else []
    uses += [("config.agent.arms", arm, "agent") for arm in config.get("agent", {}).get("arms", [])]
    for where, arm, feature in uses:
        refuse(check_feature(where, arm, arms.get(arm), feature))
    listed = (config["diagnostics"]["memory_arms"] or []) + (config["diagnostics"]["profile_arms"] or [])
    unknown = [a for a in listed if a not in config["arms"]]
    if unknown:
        raise ConfigError(f"config.diagnostics: memory/profile arms {unknown} are not arms of config.arms")
    for arm in config["diagnostics"]["profile_arms"] or []:
        refuse(check_feature("config.diagnostics.profile_arms", arm, config["arms"][arm], "decode_profile"))


def check_agent_strategies(config: dict) -> None:
    agent = config.get("agent")
    if agent and agent["strategy"] in agent.get("other_strategies", []):
        raise ConfigError(
            f"config.agent.other_strategies: {agent['strategy']!r} is the study's strategy "
            "(agent.strategy) already; list only the others to compare with it"
        )


def check_cross_fields(config: dict, read_model: bool = True) -> None:
    """Rules a JSON schema cannot say: the model file itself, references between sections, and this
    machine's cores (`read_model` False: everything but the model file, for a config whose model
    package is not installed yet)."""
    check_builds(config, read_model)
    check_arms(config)
    check_metrics(config)
    check_calibration(config)
    check_warm_session(config)
    check_stage_arms(config)
    check_agent_strategies(config)
    check_compiled(config)
    check_environments(config)
    check_machine(config)


def check_environments(config: dict) -> None:
    """Each arm's environment exists, and each of its requirements is a pip requirement or a local
    wheel or folder that is there (what the installer would refuse only after other jobs ran)."""
    environments = config.get("environments", {})
    users = [(f"config.arms[{n!r}]", f"arm {n}", arm) for n, arm in config["arms"].items()]
    users += [(f"config.builds.{n}", f"build {n}", spec) for n, spec in config["builds"].items()]
    for where, who, entry in users:
        name = entry.get("env")
        if name is None:
            continue
        if name not in environments:
            known = ", ".join(environments) or "none"
            raise ConfigError(f"{where}.env: {name!r} is not a key of config.environments (known: {known})")
        for requirement in environments[name]["requirements"]:
            problem = requirement_problem(requirement)
            if problem:
                raise ConfigError(f"config.environments.{name}.requirements ({who}): {problem}")


def _options_but(arm: dict, *ignored: str) -> dict:
    """An arm's options without the named ones: two arms meant as twins compare equal on the rest."""
    return {k: v for k, v in arm.items() if k not in ignored}


def check_compiled(config: dict) -> None:
    """The compile-cost comparison needs two vLLM arms that differ only in enforce_eager, both with
    cold reps (ready_s) and paired in the warm session (request time)."""
    section = config.get("compiled")
    if not section:
        return
    arms = config["arms"]
    for key in ("eager", "compiled"):
        name = section[key]
        refuse(check_feature(f"config.compiled.{key}", name, arms.get(name), "compiled"))
        if not arms[name]["bench"]:
            raise ConfigError(f"config.compiled.{key}: {name!r} needs bench: true")
    eager, compiled = arms[section["eager"]], arms[section["compiled"]]
    if not eager["enforce_eager"] or compiled["enforce_eager"]:
        raise ConfigError(
            f"config.compiled: {section['eager']!r} must have enforce_eager true and "
            f"{section['compiled']!r} enforce_eager false"
        )
    if _options_but(eager, "enforce_eager", "fidelity") != _options_but(
        compiled, "enforce_eager", "fidelity"
    ):
        raise ConfigError(
            f"config.compiled: {section['compiled']!r} must match {section['eager']!r} but for "
            "enforce_eager (and fidelity)"
        )
    pair = {section["eager"], section["compiled"]}
    chosen = config["bench"].get("warm_pairs")  # unset: every pair of benchmarked arms
    if chosen and not any(set(p) == pair for p in chosen):
        raise ConfigError(f"config.compiled: add {sorted(pair)} to bench.warm_pairs to pair their requests")


def check_calibration(config: dict) -> None:
    cal = config.get("calibration")
    if not cal:
        return
    arms = config["arms"]
    for key, name in [("baseline", cal["baseline"]), ("twin", cal["twin"])] + [
        ("injected", a) for a in cal["injected"]
    ]:
        if name not in arms:
            raise ConfigError(f"config.calibration.{key}: {name!r} is not an arm")
    if cal["metric"] not in METRICS or METRICS[cal["metric"]].measured != "warm":
        raise ConfigError(
            f"config.calibration.metric: {cal['metric']!r} is not a warm metric of the registry"
        )
    if not arms[cal["baseline"]]["bench"]:
        raise ConfigError(f"config.calibration.baseline: {cal['baseline']!r} must have bench: true")
    if _options_but(arms[cal["baseline"]], "bench", "fidelity") != _options_but(
        arms[cal["twin"]], "bench", "fidelity"
    ):
        raise ConfigError(
            f"config.calibration.twin: {cal['twin']!r} must match {cal['baseline']!r} but its name"
        )
    references = {cal["baseline"], cal["twin"]}
    for name in cal["injected"]:
        injected = arms[name]
        refuse(check_feature("config.calibration.injected", name, injected, "inject_slowdown"))
        pairs = config["bench"].get("warm_pairs") or []
        if pairs and not any(name in p and references & set(p) for p in pairs):
            raise ConfigError(
                f"config.calibration.injected: {name!r} must be paired in bench.warm_pairs with "
                f"the baseline {cal['baseline']!r} or the twin {cal['twin']!r}"
            )
        if injected["inject_slowdown"] <= 0:
            raise ConfigError(f"config.calibration.injected: {name!r} must have inject_slowdown > 0")
    names = [cal["baseline"], cal["twin"], *cal["injected"]]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"config.calibration: baseline, twin and injected must be different arms, got {names}"
        )


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML that refuses a key given twice in one mapping (plain YAML keeps the last silently)."""


def _unique_mapping(loader: UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise ConfigError(
                f"{loader.name}:{key_node.start_mark.line + 1}: key {key!r} given twice in one mapping "
                f"(first on line {seen[key] + 1}); YAML would keep only the last"
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def read_config_file(path: str | Path) -> dict:
    """A YAML mapping from a file; a syntax error names the file, line and column, a repeated key
    its line, a NaN or infinity its key."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a config file")
    try:
        loader = UniqueKeyLoader(path.read_text())
        loader.name = str(path)
        try:
            raw = loader.get_single_data()
        finally:
            loader.dispose()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: expected a mapping of sections at the top level, got {type(raw).__name__}"
        )
    check_finite(raw, str(path))
    return raw


def non_finite(value: object, where: str = "config") -> list[tuple[str, float]]:
    """Every NaN or infinity in a nested config, with its key path."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(where, value)]
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in non_finite(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in non_finite(item, f"{where}[{i}]")]
    return []


def check_finite(value: object, source: str) -> None:
    """NaN makes every comparison false (a gate that can never pass, a guard switched off)."""
    hits = non_finite(value)
    if hits:
        where, bad = hits[0]
        raise ConfigError(f"{source}: {where}: {bad} is not a finite number")


def merge_config(base: dict, overlay: dict) -> dict:
    """`overlay` over `base`, mappings merged key by key (Snakemake's configfile semantics)."""
    merged = copy.deepcopy(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_config(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def model_from_path(given: dict) -> dict:
    """`--config model=PATH`: the model a path names (a .gguf file or a checkpoint folder), its
    results under results/<model name>/ and its rows under that run id, unless the command line
    says otherwise."""
    path = given.get("model")
    if not isinstance(path, str):
        return given
    from edgebench.models.local import ModelFileError, default_name, infer_kind

    try:
        kind = infer_kind(path)
    except ModelFileError as error:
        raise ConfigError(str(error)) from None
    name = default_name(path)
    model = {"kind": kind, "path": path}
    return {"run_id": name, "results_dir": f"results/{name}", **given, "model": model, "replace": ["model"]}


MODEL_FILE_BUILD = "gguf-file"
MODEL_FILE_ARM = "llamacpp/gguf-file"


def add_model_file_build(config: dict) -> dict:
    """A .gguf model is also a checkpoint the user already has: the file itself becomes an existing
    build on a llama.cpp arm (when llama.cpp is installed), paired in the warm session with the gate
    baseline, so the decision says whether the file as it is fits the budget."""
    model = config.get("model") or {}
    if model.get("kind") != "gguf_file" or importlib.util.find_spec("llama_cpp") is None:
        return config
    builds = config.get("builds") or {}
    if any(spec.get("path") == model["path"] for spec in builds.values() if isinstance(spec, dict)):
        return config  # the study names the file as a build itself
    arm = {"engine": "llamacpp", "build": MODEL_FILE_BUILD, "threads": 1}
    added = {
        **config,
        "builds": {**builds, MODEL_FILE_BUILD: {"method": "existing", "path": model["path"]}},
        "arms": {**(config.get("arms") or {}), MODEL_FILE_ARM: arm},
    }
    bench = config.get("bench") or {}
    baseline = (config.get("gates") or {}).get("baseline")
    if bench.get("warm_pairs") and baseline in added["arms"]:
        added["bench"] = {**bench, "warm_pairs": [*bench["warm_pairs"], [baseline, MODEL_FILE_ARM]]}
    return added


def study_sources(path: str | Path, seen: tuple[str, ...] = ()) -> list[tuple[str, dict]]:
    """A study file and the chain of files it `extends`, base first: a study states only what
    differs from its base."""
    key = str(Path(path).resolve())
    if key in seen:
        raise ConfigError(f"{path}: extends itself through {' -> '.join(seen)}")
    raw = read_config_file(path)
    base = raw.get("extends")
    if base is None:
        return [(str(path), raw)]
    if not isinstance(base, str) or not base:
        raise ConfigError(f"{path}: extends: {base!r} is not a config file path")
    return [*study_sources(base, (*seen, key)), (str(path), raw)]


def compose(base: dict, study: dict) -> dict:
    """`study` over `base`: sections merged key by key, except those the study lists under
    `replace` (given whole: an arms or builds section that keeps none of the base's entries)."""
    whole = study.get("replace") or []
    if not isinstance(whole, list) or not all(isinstance(k, str) for k in whole):
        raise ConfigError(f"replace: {whole!r} must be a list of section names")
    trimmed = {k: v for k, v in base.items() if k not in whole}
    given = {k: v for k, v in study.items() if k not in ("extends", "replace")}
    return merge_config(trimmed, given)


def study_config(base_path: str | Path, command_line: dict, replace: bool = False) -> tuple[dict, set[str]]:
    """The workflow's config: the base file, then the overlay files named in `overlays` (a comma
    separated list, from `--config overlays=config/agent.yaml`), then anything else the command line
    gave (--configfile, --config) on top. `study=FILE` on the command line, or `replace` (Snakemake's
    --replace-workflow-config), takes another study instead of the base file. Returns the validated
    config (defaults filled) and the top-level sections that were given (optional stages run only
    when their section was). An error names the file that gave the bad key."""
    overlays = command_line.get("overlays") or ""
    paths = overlays.split(",") if isinstance(overlays, str) else list(overlays)
    study = command_line.get("study")
    base_path = study or base_path
    sources: list[tuple[str, dict]] = []
    if study or (Path(base_path).exists() and not replace):
        sources += study_sources(base_path)
    sources += [(p.strip(), read_config_file(p.strip())) for p in paths if p.strip()]
    given = model_from_path({k: v for k, v in command_line.items() if k not in ("overlays", "study")})
    sources.append(("the command line (--config)", given))
    config: dict = {}
    for _, raw in sources:
        config = compose(config, raw)
    if isinstance(command_line.get("model"), str):
        config = add_model_file_build(config)
    try:
        return validate_config(config), set(config)
    except ConfigError as error:
        origin = config_origin(str(error), sources)
        raise ConfigError(f"{origin}: {error}" if origin else str(error)) from None


def _lookup(tree: object, dotted: str) -> bool:
    """Whether `dotted` (keys joined by '.', keys that may hold dots themselves) is a path in tree."""
    if not dotted:
        return True
    if not isinstance(tree, dict):
        return False
    for key in sorted((k for k in tree if isinstance(k, str)), key=len, reverse=True):
        if dotted == key or dotted.startswith(key + "."):
            return _lookup(tree[key], dotted[len(key) + 1 :])
    return False


def config_origin(message: str, sources: list[tuple[str, dict]]) -> str:
    """The last file (or the command line) that gave the key an error message names."""
    paths = [m.group(1).strip(".") for m in re.finditer(r"\bconfig((?:\.[^:\s\[]+)?)", message)]
    if not paths:
        return ""
    dotted = max(paths, key=len)  # the most specific key named
    unexpected = re.search(r"\('([^']+)' was unexpected", message)
    if unexpected:
        dotted = f"{dotted}.{unexpected.group(1)}".strip(".")
    if not dotted:  # the config as a whole (a required section): no one file gave it
        return ""
    for name, raw in reversed(sources):
        if _lookup(raw, dotted):
            return name
    return ""


def load_config(path: str | Path, read_model: bool = True) -> dict:
    """A study file (and what it extends), validated."""
    config: dict = {}
    for _, raw in study_sources(path):
        config = compose(config, raw)
    return validate_config(config, read_model=read_model)
