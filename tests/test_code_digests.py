"""A retraction is only a rule rerun: editing a package module reruns exactly the rules whose
scripts can run it, and editing a config section reruns exactly the rules that read it.

The study's outputs are stand-ins (touched files with recorded metadata), so every rule of the test
study's DAG is present and a dry run after one edit shows which jobs Snakemake would rerun, and why.
"""

import modulefinder
import os
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from edgebench.codeclosure import closure

from .conftest import ROOT, set_at

pytestmark = pytest.mark.workflow
DIRECT = ("Params have changed", "Code has changed")


def snakemake(checkout: Path, workdir: Path, *extra: str) -> str:
    """Snakemake on a checkout's workflow, importing that checkout's package."""
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(checkout / "workflow" / "Snakefile"),
         "--directory", str(workdir), "--cores", "1", *extra],
        capture_output=True, text=True, check=True, env=env, timeout=600,
    )  # fmt: skip
    return run.stdout + run.stderr


def directly_rerun(out: str) -> set[str]:
    """Rules of the dry run's jobs that rerun because their own params or code changed."""
    rules, current = set(), None
    for line in out.splitlines():
        match = re.match(r"^(?:local)?rule (\w+):", line)
        if match:
            current = match.group(1)
        elif current and line.strip().startswith("reason:") and any(r in line for r in DIRECT):
            rules.add(current)
    return rules


def rerun(out: str) -> set[str]:
    """Every rule with a job in the dry run: the direct triggers and what depends on them."""
    return set(re.findall(r"^(?:local)?rule (\w+):", out, re.M)) - {"all"}


def descendants(graph: dict[str, set[str]], rules: set[str]) -> set[str]:
    """The rules, and every rule that takes their outputs, transitively."""
    found, todo = set(rules), list(rules)
    while todo:
        for child in graph.get(todo.pop(), set()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found - {"all"}


def rule_graph(checkout: Path, workdir: Path) -> dict[str, set[str]]:
    """Rule name -> the rules that take its outputs as inputs (Snakemake's --rulegraph)."""
    dot = snakemake(checkout, workdir, "--rulegraph")
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    graph: dict[str, set[str]] = {}
    for upstream, downstream in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M):
        graph.setdefault(names[upstream], set()).add(names[downstream])
    return graph


def rule_blocks(checkout: Path) -> dict[str, str]:
    blocks = {}
    for smk in (checkout / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"(?m)^(?=rule )", smk.read_text()):
            name = re.match(r"rule (\w+):", block)
            if name:
                blocks[name.group(1)] = block
    return blocks


def helper_sections(checkout: Path, config: dict) -> dict[str, set[str]]:
    """Each helper function of common.smk -> the config sections its body names."""
    text = (checkout / "workflow" / "rules" / "common.smk").read_text()
    bodies = re.split(r"(?m)^def ", text)[1:]
    return {
        body.split("(", 1)[0]: {s for s in config if f'config["{s}"]' in body or f'config.get("{s}"' in body}
        for body in bodies
    }


def declared_sections(block: str, helpers: dict[str, set[str]]) -> set[str]:
    """Sections a rule's block names itself or through the helpers it calls."""
    named = set(re.findall(r'config\["(\w+)"\]', block))
    for name, sections in helpers.items():
        if re.search(rf"\b{name}\b", block):
            named |= sections
    return named


def rule_scripts(checkout: Path) -> dict[str, Path]:
    scripts = {}
    for name, block in rule_blocks(checkout).items():
        script = re.search(r'"\.\./scripts/(\w+\.py)"', block)
        if script:
            scripts[name] = checkout / "workflow" / "scripts" / script.group(1)
    return scripts


def stand_in_checkout(root: Path, i: int) -> tuple[Path, Path]:
    """A checkout of the workflow and package with a test study whose every output is present and
    recorded as up to date (touched, with metadata)."""
    checkout, workdir = root / f"checkout{i}", root / f"study{i}"
    for part in ("workflow", "src"):
        shutil.copytree(ROOT / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / ".test" / "config", workdir / "config")
    for line in snakemake(checkout, workdir, "--summary").splitlines():
        if line.startswith("results/"):
            path = workdir / line.split("\t")[0]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    snakemake(checkout, workdir, "--touch", "--forceall")
    assert "Nothing to be done" in snakemake(checkout, workdir, "--dry-run")
    return checkout, workdir


@pytest.fixture(scope="module")
def stand_in_study(tmp_path_factory):
    """Two stand-in checkouts (so edits can be checked two at a time), built side by side: a dry run
    after an edit shows exactly what it reruns."""
    root = tmp_path_factory.mktemp("digests")
    with ThreadPoolExecutor(2) as pool:
        pairs = list(pool.map(stand_in_checkout, [root, root], range(2)))
    graph = rule_graph(*pairs[0])
    rules = (set(graph) | set().union(*graph.values())) - {"all"}
    return pairs, rules, graph


def test_the_closure_holds_every_module_modulefinder_finds():
    """An independent reading of the imports (the standard library's bytecode scan) finds nothing
    the closure lacks."""
    package = ROOT / "src" / "edgebench"
    for script in sorted((ROOT / "workflow" / "scripts").glob("*.py")):
        finder = modulefinder.ModuleFinder(path=[str(ROOT / "src")])  # only the package is read
        finder.run_script(str(script))
        found = {
            Path(module.__file__).resolve()
            for name, module in finder.modules.items()
            if name.startswith("edgebench") and module.__file__
        }
        assert package / "jobs.py" in found, script.name  # it did read the package
        assert found <= set(closure(script)), (script.name, sorted(found - set(closure(script))))
    assert package / "bench" / "worker.py" in closure(ROOT / "workflow" / "scripts" / "bench_rep.py")


def module_classes(checkout: Path, rules: set[str], modules: list[Path]) -> dict[frozenset, list[Path]]:
    """The modules grouped by the set of rules that can run them (checkout-relative paths).

    Modules that the same rules can run form one class, and one dry run edits every module of a
    class at once: a digest is a hash over the rule's closure, so an edit to any member changes
    exactly the same digests (that the closure holds every module is checked above). One dry run
    per class, not per module, keeps the test's cost at the number of distinct rule sets."""
    package = checkout / "src" / "edgebench"
    # closures are read once, before the threads (ast.parse is not thread-safe), as checkout paths
    can_run_of = {
        rule: {p.relative_to(checkout) for p in closure(script, package) if p.is_relative_to(checkout)}
        for rule, script in rule_scripts(checkout).items()
        if rule in rules
    }
    classes: dict[frozenset, list[Path]] = {}
    for module in modules:
        can_run = frozenset(rule for rule, files in can_run_of.items() if module in files)
        classes.setdefault(can_run, []).append(module)
    return classes


def test_editing_any_module_reruns_exactly_the_rules_that_can_run_it(stand_in_study):
    pairs, rules, graph = stand_in_study
    checkouts = [checkout for checkout, _ in pairs]
    modules = sorted(p.relative_to(checkouts[0]) for p in (checkouts[0] / "src" / "edgebench").rglob("*.py"))
    classes = module_classes(checkouts[0], rules, modules)
    locks = {str(checkout): threading.Lock() for checkout in checkouts}

    def check(job):
        (checkout, workdir), (can_run, members) = job
        with locks[str(checkout)]:  # one edit at a time per checkout: two would mix their reruns
            originals = {m: (checkout / m).read_text() for m in members}
            for module, text in originals.items():
                (checkout / module).write_text(text + "\n# an edit\n")
            try:
                out = snakemake(checkout, workdir, "--dry-run")
            finally:
                for module, text in originals.items():
                    (checkout / module).write_text(text)
        # Snakemake gives a job one reason: downstream of another rerun job it says "input updated",
        # so the jobs whose own params changed are a subset, and the whole set is theirs plus what
        # depends on them.
        direct = directly_rerun(out)
        assert direct <= can_run, ([str(m) for m in members], sorted(direct - can_run))
        return members, rerun(out), descendants(graph, set(can_run))

    jobs = [(pairs[i % 2], item) for i, item in enumerate(classes.items())]
    with ThreadPoolExecutor(2) as pool:
        results = [
            (module, seen, expected)
            for members, seen, expected in pool.map(check, jobs)
            for module in members
        ]
    wrong = {str(m): (sorted(seen), sorted(expected)) for m, seen, expected in results if seen != expected}
    assert not wrong, wrong
    by_module = {str(m): seen for m, seen, _ in results}
    assert {"bench_rep", "compare_and_gates", "item_verdict"} <= by_module["src/edgebench/metrics.py"]
    assert by_module["src/edgebench/agent/screendiff.py"] == set()  # no rule can run it
    assert len(results) == len(modules) > 60


def _config_edit(config: dict, section: str) -> dict | None:
    """The config with one value of the section changed so that it stays valid (None if none can)."""
    from edgebench.config import ConfigError, validate_config

    def leaves(value, path):
        if isinstance(value, dict):
            for key, child in value.items():
                yield from leaves(child, (*path, key))
        elif isinstance(value, bool | int | float | str):
            yield path, value

    for path, value in leaves(config[section], (section,)):
        if isinstance(value, bool):
            candidates = [not value]
        elif isinstance(value, int | float):
            candidates = [value + 2, value / 2]
        else:
            candidates = [value + "x"]
        for candidate in candidates:
            changed = set_at(config, path, candidate)
            try:
                validate_config(changed)
                return changed
            except ConfigError:
                continue
    return None


def sections_read(
    edits: list, rules: set[str], scripts: dict[str, Path], config: dict
) -> dict[str, set[str]]:
    """Each edited section -> the rules whose code reads it (run_id: every rule stamps it), read
    before the threads (ast.parse is not thread-safe)."""
    from edgebench.codeclosure import config_sections_read

    return {
        section: {
            r
            for r in rules
            if r in scripts
            and (section == "run_id" or section in config_sections_read(str(scripts[r]), tuple(config)))
        }
        for section, _ in edits
    }


def test_editing_a_config_section_reruns_exactly_the_rules_that_read_it(stand_in_study):
    pairs, rules, graph = stand_in_study
    checkout = pairs[0][0]
    scripts = rule_scripts(checkout)
    for script in scripts.values():  # config reaches a script only through its params
        assert not re.search(r"\b(sm|snakemake)\.config\b", script.read_text()), script.name
    config = yaml.safe_load((pairs[0][1] / "config" / "config.yaml").read_text())
    blocks = rule_blocks(checkout)
    helpers = helper_sections(checkout, config)
    edits = [
        (section, changed)
        for section in config
        if section not in ("roadmap", "retractions")
        and (changed := _config_edit(config, section)) is not None
    ]
    reads = sections_read(edits, rules, scripts, config)
    locks = {str(checkout): threading.Lock() for checkout, _ in pairs}

    def dry_run(job):
        (checkout, workdir), (section, changed) = job
        path = workdir / "config" / "config.yaml"
        with locks[str(checkout)]:  # one edit at a time per study folder
            original = path.read_text()
            path.write_text(yaml.safe_dump(changed, sort_keys=False))  # key order as written
            try:
                return section, snakemake(checkout, workdir, "--dry-run")
            finally:
                path.write_text(original)

    jobs = [(pairs[i % len(pairs)], edit) for i, edit in enumerate(edits)]
    with ThreadPoolExecutor(len(pairs)) as pool:
        outs = list(pool.map(dry_run, jobs))
    for section, out in outs:
        # the rules whose code reads it, and those whose Snakefile params name it, directly or
        # through a helper of common.smk
        declared = {r for r in rules if section in declared_sections(blocks.get(r, ""), helpers)}
        direct = directly_rerun(out)
        assert direct <= reads[section] | declared, (section, sorted(direct - reads[section] - declared))
        assert reads[section] <= rerun(out) <= descendants(graph, reads[section] | declared), (
            section,
            sorted(reads[section] - rerun(out)),
        )
    assert {"bench", "arms", "model", "run_id", "gates"} <= {section for section, _ in outs}
