"""The code-digest reader's facts kept on disk between processes: a later process reads them back
instead of the syntax trees, an edited file is read afresh even when its size and mtime are those
of the cached version, and a cache that cannot be used is only a slower parse."""

import json
import os
import subprocess
import sys
from pathlib import Path

from edgebench.file_facts_cache import FileFactsCache

CLOSURE = """
import json, sys
from pathlib import Path
import edgebench.codeclosure as cc
parsed = []
original = cc.ast.parse
cc.ast.parse = lambda *a, **k: parsed.append(a) or original(*a, **k)
files = cc.closure(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({"files": [p.name for p in files], "parsed": len(parsed)}))
"""


def closure_in_new_process(script: Path, package: Path, cache_dir: Path) -> dict:
    env = {**os.environ, "EDGEBENCH_CACHE_DIR": str(cache_dir)}
    run = subprocess.run(
        [sys.executable, "-c", CLOSURE, str(script), str(package)],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(run.stdout.strip().splitlines()[-1])


def a_package(root: Path) -> tuple[Path, Path]:
    package = root / "src" / "edgebench"
    package.mkdir(parents=True)
    for name, text in {
        "__init__.py": "",
        "first.py": "from edgebench import second  # the module it runs\n",
        "second.py": "X = 1\n",
        "third.py": "Y = 2\n",
    }.items():
        (package / name).write_text(text)
    script = root / "script.py"
    script.write_text("import edgebench.first\n")
    return script, package


def test_a_second_process_reads_the_facts_back_instead_of_parsing(tmp_path):
    script, package = a_package(tmp_path)
    first = closure_in_new_process(script, package, tmp_path / "cache")
    assert sorted(first["files"]) == ["__init__.py", "first.py", "script.py", "second.py"]
    assert first["parsed"] == 4  # the script and every package file it reaches
    again = closure_in_new_process(script, package, tmp_path / "cache")
    assert again == {"files": first["files"], "parsed": 0}


def test_an_edit_that_keeps_size_and_mtime_is_read_afresh(tmp_path):
    script, package = a_package(tmp_path)
    module = package / "first.py"
    assert "second.py" in closure_in_new_process(script, package, tmp_path / "cache")["files"]
    before = module.stat()
    module.write_text(module.read_text().replace("second", "third "))  # the same number of bytes
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert module.stat().st_size == before.st_size and module.stat().st_mtime_ns == before.st_mtime_ns
    files = closure_in_new_process(script, package, tmp_path / "cache")["files"]
    assert "third.py" in files and "second.py" not in files


def test_an_unusable_cache_only_costs_a_parse(tmp_path):
    script, package = a_package(tmp_path)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "file-facts.json").write_text('{"reader": ')  # cut off mid-write by an old version
    broken = closure_in_new_process(script, package, cache_dir)
    assert broken["parsed"] == 4 and "second.py" in broken["files"]
    assert json.loads((cache_dir / "file-facts.json").read_text())["facts"]  # rewritten whole
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    assert closure_in_new_process(script, package, blocked)["files"] == broken["files"]


def test_another_reader_discards_every_entry(tmp_path):
    path = tmp_path / "facts.json"
    old = FileFactsCache(path, reader_digest="old")
    facts = {"names": ["edgebench.x"], "config_keys": []}
    old.put("key", facts)
    old.save()
    assert FileFactsCache(path, reader_digest="old").get("key") == facts
    assert FileFactsCache(path, reader_digest="new").get("key") is None


def test_a_save_keeps_what_another_process_wrote_meanwhile(tmp_path):
    path = tmp_path / "facts.json"
    one, two = FileFactsCache(path, "r"), FileFactsCache(path, "r")
    one.get("missing")  # both loaded before either wrote
    two.get("missing")
    one.put("a", {"names": [], "config_keys": ["bench"]})
    two.put("b", {"names": [], "config_keys": ["agent"]})
    one.save()
    two.save()
    assert set(json.loads(path.read_text())["facts"]) == {"a", "b"}
