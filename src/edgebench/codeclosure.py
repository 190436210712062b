"""The package files a workflow script can run: the closure of its `edgebench` imports.

Snakemake does not track imported code. Each rule therefore takes, as a param, a digest of the
files in its script's import closure, read from the source: every import statement, those inside
functions included, and every `edgebench.*` module named in a string (a worker started with
`python -m`), followed through the package; the `__init__.py` of every package on the way;
and the package's data folder for a module that reads it (`Path(__file__)` with "data"). An edit to
any of those files changes the digest and reruns exactly the rules whose scripts can run it.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

from edgebench.file_facts_cache import FileFactsCache, cache_file, file_key
from edgebench.provenance import digest_files

PACKAGE_NAME = "edgebench"
PACKAGE = Path(__file__).resolve().parent


def module_file(name: str, package: Path = PACKAGE) -> Path | None:
    """`edgebench.bench.compare` -> .../edgebench/bench/compare.py (or a package's __init__.py)."""
    parts = name.split(".")
    if parts[0] != PACKAGE_NAME:
        return None
    base = package.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path, package: Path = PACKAGE) -> str:
    relative = path.relative_to(package).with_suffix("")
    parts = [PACKAGE_NAME, *relative.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def version_of(path: Path) -> tuple[int, int]:
    """What tells one state of a file from another (an edit changes its mtime or size)."""
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@cache
def _parsed(path: Path, version: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per state of the file: a Snakefile parse reads each
    module for dozens of rules' closures (unparsed each time, a dry run took several seconds)."""
    return _parsed(path, version_of(path))


# The only nodes the import closure and the config keys look at.
_READ_NODES = (ast.Import, ast.ImportFrom, ast.Constant, ast.Subscript, ast.Call)


def read_nodes(path: Path) -> tuple[ast.AST, ...]:
    """The file's import, constant, subscript and call nodes: one walk of the tree per state of the
    file serves both readers (walking every node is most of a parse's cost)."""
    return _read_nodes(path, version_of(path))


@cache
def _read_nodes(path: Path, version: tuple[int, int]) -> tuple[ast.AST, ...]:
    return tuple(node for node in ast.walk(parsed(path)) if isinstance(node, _READ_NODES))


# Facts of a file outlive the process on disk (a dry run is mostly this reading otherwise); the
# reader's own source is part of the cache's identity, so a change here discards every entry.
_DISK = FileFactsCache(cache_file(), hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16])


@cache
def _file_facts(path: Path, package: Path, version: tuple[int, int]) -> dict[str, list[str]]:
    """The file's imported names and config keys read, from disk when its bytes were read before."""
    key = file_key(path, package, path.read_bytes())
    facts = _DISK.get(key)
    if facts is None:
        facts = {
            "names": sorted(_read_imported_names(path, package)),
            "config_keys": sorted(_read_config_keys(path)),
        }
        _DISK.put(key, facts)
    return facts


def _imported_names(path: Path, package: Path, version: tuple[int, int]) -> frozenset[str]:
    return frozenset(_file_facts(path, package, version)["names"])


def _read_imported_names(path: Path, package: Path) -> set[str]:
    """Every module name the file may load: import statements (`from a import b` may be a.b), and
    dotted names in strings that start processes or name classes (`-m edgebench.bench.worker`)."""
    inside = path.is_relative_to(package)
    here = module_name(path, package).split(".") if inside else []
    if inside and path.name != "__init__.py":
        here = here[:-1]  # a module's relative imports start from its package
    names: set[str] = set()
    for node in read_nodes(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("edgebench.")
        ):
            names.add(node.value.split(":")[0])  # `-m edgebench.bench.worker`, "module:function"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1] if inside else []
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def imported_files(path: Path, package: Path = PACKAGE) -> tuple[Path, ...]:
    """The package files the file's imports run: importing a.b.c runs a and a.b first."""
    return _imported_files(path, package, version_of(path))


@cache
def _imported_files(path: Path, package: Path, version: tuple[int, int]) -> tuple[Path, ...]:
    # Once per file state, not once per script whose closure reaches the file: a Snakefile parse
    # walks some forty closures over the same modules.
    found = set()
    for name in _imported_names(path, package, version):
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            module = module_file(".".join(parts[:depth]), package)
            if module is not None:
                found.add(module)
    return tuple(sorted(found))


def reads_package_data(path: Path) -> bool:
    return _reads_package_data(path, version_of(path))


@cache
def _reads_package_data(path: Path, version: tuple[int, int]) -> bool:
    source = path.read_text(encoding="utf-8")
    return "__file__" in source and '"data"' in source


def closure(script: Path, package: Path = PACKAGE) -> list[Path]:
    """The script and every package file it can import, plus data folders read, sorted."""
    seen: set[Path] = set()
    queue = [Path(script).resolve()]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        queue.extend(found for found in imported_files(path, package) if found not in seen)
    data = package / "data"
    if any(p.is_relative_to(package) and reads_package_data(p) for p in seen) and data.is_dir():
        seen.update(p for p in data.rglob("*") if p.is_file())
    return sorted(seen)


@cache
def script_closure(script: str) -> tuple[Path, ...]:
    """A workflow script's closure, read once per Snakefile parse (digest and config both use it)."""
    return tuple(closure(Path(script)))


def script_code_digest(script: str) -> str:
    """Digest of the files in a script's closure."""
    return digest_files(list(script_closure(script)))


def _is_config(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "config") or (
        isinstance(node, ast.Attribute) and node.attr == "config"
    )


def config_keys_read(path: Path) -> frozenset[str]:
    """String keys the file reads from something named `config`: `config["bench"]`,
    `config.get("agent")`, `snakemake.config["arms"]`."""
    return _config_keys_read(path, version_of(path))


def _config_keys_read(path: Path, version: tuple[int, int]) -> frozenset[str]:
    return frozenset(_file_facts(path, PACKAGE, version)["config_keys"])


def _read_config_keys(path: Path) -> set[str]:
    keys: set[str] = set()
    for node in read_nodes(path):
        if isinstance(node, ast.Subscript) and _is_config(node.value):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_config(node.func.value)
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            keys.add(key.value)
    return keys


@cache
def config_sections_read(script: str, sections: tuple[str, ...]) -> tuple[str, ...]:
    """The study config's top-level sections that the script's closure reads (model configs are
    also called `config`: only names that are sections of the study config count)."""
    read = set().union(*(config_keys_read(p) for p in script_closure(script) if p.suffix == ".py"))
    return tuple(s for s in sections if s in read)
