"""Memory ledger of one arm: where each process's RssAnon goes, run as
`python -m edgebench.diagnostics.ledger SPEC OUT` in a fresh process.

Per process: measured RssAnon, a baseline (a fresh interpreter that imports the same modules and
nothing else), attributed components (tensors counted once per storage by resident pages, or the
engine's own buffer report), and `unexplained` = measured - baseline - attributed. Non-additive
views (the allocator's mallinfo2, file-backed weights) are rows of kind `view`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from edgebench.bench.contract import EngineSpec
from edgebench.engines.registry import ledger_function
from edgebench.engines.vllm_layers import LayerKernels
from edgebench.procfs import children_of, rss_anon_kb

LEDGER_COLUMNS = (  # the ledger process's columns; the rule adds the arm's identity
    "process",
    "component",
    "kind",
    "mb",
    "allocated_mb",
    "file_mb",
    "method",
    "detail",
    "pid",
)

MALLOC_HELD = "malloc free but held"
SAME_MODULES = "fresh interpreter importing the same modules"
ENGINE_CORE_MODULES = ("vllm", "vllm.v1.engine.core")

# Every module that imports counts; one that cannot be imported alone (a plugin needing its host's
# state, a submodule run as a script) is named on stderr, so a lowered baseline is never silent.
_BASELINE_CODE = """
import importlib, json, os, sys
for name in json.load(sys.stdin):
    try:
        importlib.import_module(name)
    except (ImportError, RuntimeError, OSError, AttributeError, SystemExit) as error:
        print(f"baseline: {name} not imported: {type(error).__name__}: {error}", file=sys.stderr)
from edgebench.procfs import rss_anon_kb
print(rss_anon_kb(os.getpid()))
"""


class Baselines:
    """Baseline interpreters, each started as soon as its module list is known and read at the end:
    a process's RssAnon is its own, so one may import beside the engine's one-thread load or beside
    another baseline (each imports for seconds). Leaving the block stops any still running."""

    def __init__(self, timeout_s: float = 600):
        self.timeout_s = timeout_s
        self.procs: list[subprocess.Popen] = []

    def start(self, modules: list[str]) -> None:
        wanted = [m for m in modules if not m.startswith("__") and m != "edgebench.diagnostics.ledger"]
        # The list goes through a file: read whenever the child starts, it blocks no one.
        with tempfile.TemporaryFile("w+") as given:
            json.dump(wanted, given)
            given.seek(0)
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _BASELINE_CODE],
                    stdin=given,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )

    def pids(self) -> set[int]:
        return {proc.pid for proc in self.procs}

    def results(self) -> list[float]:
        """RssAnon MB of each baseline, in the order they were started."""
        return [_baseline_result(proc, self.timeout_s) for proc in self.procs]

    def __enter__(self) -> Baselines:
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs:  # one that failed or timed out leaves none of the others running
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)


def baseline_rss_anon_mbs(module_lists: list[list[str]], timeout_s: float = 600) -> list[float]:
    """RssAnon of a fresh interpreter after importing each list of modules (the interpreter and
    libraries' share), one process per list, started together."""
    with Baselines(timeout_s) as baselines:
        for modules in module_lists:
            baselines.start(modules)
        return baselines.results()


def _baseline_result(proc: subprocess.Popen, timeout_s: float) -> float:
    out, err = proc.communicate(timeout=timeout_s)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    for line in err.splitlines():
        if line.startswith("baseline: "):
            print(line, file=sys.stderr, flush=True)  # to the rule's log: the baseline lacks that module
    return int(out.strip().splitlines()[-1]) / 1024.0


def process_rows(
    process: str,
    pid: int,
    measured_mb: float,
    baseline_mb: float,
    baseline_method: str,
    attributed: list[dict],
    views: list[dict] = (),
) -> list[dict]:
    """One process's ledger: measured, baseline, attributed parts, unexplained, then views."""
    # Freed chunks malloc keeps are memory no tensor holds: a part of its own, not a view.
    attributed = [*attributed, *(v for v in views if v["component"] == MALLOC_HELD)]
    views = [v for v in views if v["component"] != MALLOC_HELD]
    rows = [
        {"component": "RssAnon", "kind": "measured", "mb": measured_mb, "method": "/proc/PID/status RssAnon"},
        {
            "component": "interpreter + imported modules",
            "kind": "baseline",
            "mb": baseline_mb,
            "method": baseline_method,
        },
        *({"kind": "attributed", **row} for row in attributed),
    ]
    explained = baseline_mb + sum(r["mb"] for r in attributed)
    rows.append(
        {
            "component": "unexplained",
            "kind": "unexplained",
            "mb": measured_mb - explained,
            "method": "measured - baseline - attributed",
        }
    )
    rows += [{"kind": "view", **row} for row in views]
    return [{"process": process, "pid": pid, **row} for row in rows]


def _malloc_views() -> list[dict]:
    from edgebench.diagnostics.tensors import malloc_view_mb

    return [
        {"component": name, "mb": mb, "method": "glibc mallinfo2"} for name, mb in malloc_view_mb().items()
    ]


def _this_process() -> tuple[int, float, list[str], list[dict]]:
    """What every ledger measures of the process it runs in: pid, RssAnon MB, the imported modules
    (for its baseline) and the allocator's view."""
    pid = os.getpid()
    return pid, rss_anon_kb(pid) / 1024.0, sorted(sys.modules), _malloc_views()


def _tensor_rows(ledger) -> list[dict]:
    return [
        {**row, "method": "live tensors, one per storage, anonymous resident pages"} for row in ledger.rows()
    ]


class LedgerWorkerExtension(LayerKernels):
    """Mixed into vLLM's worker (worker_extension_cls): runs inside the process that holds the model."""

    def edgebench_ledger(self) -> dict:
        from edgebench.diagnostics.tensors import model_ledger

        runner = self.model_runner
        ledger, owned = model_ledger(runner.get_model(), getattr(runner, "kv_caches", []))
        pid, measured, modules, views = _this_process()
        return {
            "pid": pid,
            "rss_anon_mb": measured,
            "attributed": _tensor_rows(ledger) + [{**r, "method": "oneDNN handler shape"} for r in owned],
            "views": views,
            "modules": modules,
        }


def _comm(pid: int) -> str:
    with open(f"/proc/{pid}/comm") as handle:
        return handle.read().strip()


def vllm_ledger(spec: EngineSpec) -> list[dict]:
    from edgebench.engines.base import apply_env
    from edgebench.engines.vllm_engine import VllmEngine, vllm_env

    apply_env(vllm_env(spec.options))  # the baselines start in the environment the engine's processes get
    with Baselines() as baselines:
        # EngineCore's module list is fixed: its baseline imports beside the engine's one-thread load
        baselines.start(list(ENGINE_CORE_MODULES))
        engine = VllmEngine()
        engine.load(
            spec.build_dir,
            spec.options,
            spec.max_model_len,
            worker_extension_cls="edgebench.diagnostics.ledger.LedgerWorkerExtension",
        )
        front, worker, others = _vllm_processes(engine, spec, baselines.pids())
        engine.close()
        baselines.start(front["modules"])
        baselines.start(worker["modules"])
        core_base, front_base, worker_base = baselines.results()
    rows = process_rows(
        "front end",
        front["pid"],
        front["rss_anon_mb"],
        front_base,
        SAME_MODULES,
        front["attributed"],
        front["views"],
    )
    rows += process_rows(
        "worker",
        worker["pid"],
        worker["rss_anon_mb"],
        worker_base,
        SAME_MODULES,
        worker["attributed"],
        worker["views"],
    )
    for pid, (comm, mb) in sorted(others.items()):
        if comm.startswith("VLLM::EngineCor"):  # comm is cut at 15 characters
            # No hook runs in EngineCore: its baseline imports the module it starts from.
            name, base, method = "EngineCore", core_base, f"fresh interpreter importing {ENGINE_CORE_MODULES}"
        else:  # a helper (e.g. multiprocessing's resource tracker): no baseline of its own
            name, base, method = f"helper: {comm}", 0.0, "none: helper process"
        rows += process_rows(name, pid, mb, base, method, [])
    return rows


def _vllm_processes(
    engine, spec: EngineSpec, baseline_pids: set[int]
) -> tuple[dict, dict, dict[int, tuple[str, float]]]:
    """The front end's and the worker's measurements with the context filled once (the state a
    bench rep measures), and each other child process's name and RssAnon MB (the engine's, not the
    ledger's own baseline interpreters)."""
    from edgebench.diagnostics.tensors import StorageLedger, live_tensors

    engine.generate(spec.filled_context_prompt(), 1)
    worker = engine.llm.collective_rpc("edgebench_ledger")[0]
    tensors = StorageLedger()
    for tensor in live_tensors():
        tensors.add("other live tensors", tensor)
    pid, measured, modules, views = _this_process()
    front = {
        "pid": pid,
        "rss_anon_mb": measured,
        "modules": modules,
        "views": views,
        "attributed": _tensor_rows(tensors),
    }
    skip = {worker["pid"], *baseline_pids}
    others = {p: (_comm(p), rss_anon_kb(p) / 1024.0) for p in children_of(pid) if p not in skip}
    return front, worker, others


def hf_ledger(spec: EngineSpec) -> list[dict]:
    from edgebench.diagnostics.tensors import model_ledger
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(spec.build_dir, spec.options, spec.max_model_len)
    engine.generate(spec.filled_context_prompt(), 1)  # its KV cache is freed when generate returns
    ledger, _ = model_ledger(engine.model)
    return in_process_rows(engine, _tensor_rows(ledger))


def in_process_rows(engine, attributed: list[dict], extra_views: list[dict] = ()) -> list[dict]:
    """Ledger of an engine that runs inside this process: measure, close, then the baseline."""
    pid, measured, modules, views = _this_process()
    engine.close()
    return process_rows(
        "model process",
        pid,
        measured,
        baseline_rss_anon_mbs([modules])[0],
        SAME_MODULES,
        attributed,
        [*extra_views, *views],
    )


# llama.cpp reports its buffers while loading, e.g.
# "llama_context:        CPU compute buffer size =    98.01 MiB"
_BUFFER = re.compile(r"^\s*\w+:\s+(\S.*?)\s+buffer size\s*=\s*([\d.]+) MiB", re.MULTILINE)


def parse_llamacpp_buffers(log: str) -> dict[str, float]:
    """Buffer sizes (MiB) llama.cpp reports while loading, summed per buffer name."""
    sizes: dict[str, float] = {}
    for name, mib in _BUFFER.findall(log):
        key = " ".join(name.split())
        sizes[key] = sizes.get(key, 0.0) + float(mib)
    return sizes


def llamacpp_ledger(spec: EngineSpec) -> list[dict]:
    from edgebench.engines.llamacpp_engine import LlamaCppEngine

    engine = LlamaCppEngine()
    log = io.StringIO()
    with contextlib.redirect_stderr(log):
        engine.load(spec.build_dir, spec.options, spec.max_model_len, verbose=True)
    engine.generate(spec.filled_context_prompt(), 1)
    attributed, file_backed = [], []
    for name, mib in parse_llamacpp_buffers(log.getvalue()).items():
        row = {"component": f"llama.cpp {name} buffer", "mb": mib, "method": "llama.cpp load log"}
        # Mapped weights are file pages (RssFile), not anonymous memory: a view, not a part.
        (file_backed if "Mapped" in name else attributed).append(row)
    # With logits_all, llama.cpp regrows its output buffer to one row of logits per position of the
    # batch when it decodes (no log line says so): the filled prompt's rows, float32.
    grown = (spec.max_model_len - 2) * spec.vocab_size * 4 / 2**20
    logged = sum(r["mb"] for r in attributed if "output" in r["component"])
    attributed.append(
        {
            "component": "llama.cpp output buffer regrown at decode",
            "mb": max(grown - logged, 0.0),
            "method": "estimate: positions x vocab x 4 B, minus the logged initial buffer",
        }
    )
    scores = engine.llm.scores
    attributed.append(
        {
            "component": "llama-cpp-python logits array (numpy)",
            "mb": scores.nbytes / 2**20,
            "method": "Llama.scores.nbytes",
            "detail": f"{scores.shape} {scores.dtype}",
        }
    )
    return in_process_rows(engine, attributed, file_backed)


def main(spec_path: str, out_path: str) -> None:
    from edgebench.engines.base import apply_env

    spec = EngineSpec.from_json(json.loads(open(spec_path).read()))
    apply_env({})
    spec.require_environment()
    rows = ledger_function(spec.engine)(spec)
    for row in rows:
        for column in LEDGER_COLUMNS:
            row.setdefault(column, None)
    with open(out_path, "w") as handle:
        json.dump(rows, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
