"""The kernels rule: measured ceilings first, then every kernel at the reference model's shapes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from edgebench.diagnostics.ceilings import bf16_matmul_gflop_s, last_level_cache_bytes, stream_gb_s
from edgebench.diagnostics.kernels import CacheFlusher, add_rates, kernel_rows, model_shapes
from edgebench.diagnostics.stamp import stamp
from edgebench.io import write_parquet
from edgebench.models.hf_config import model_config


def ceiling_rows(threads: list[int], array_bytes: int) -> list[dict]:
    rows = []
    for t in threads:
        stream = stream_gb_s(t, array_bytes)
        rows += [{"kernel": f"stream_{name}", "threads": t, "gb_s": value} for name, value in stream.items()]
        rows.append({"kernel": "bf16_matmul_peak", "threads": t, "gflop_s": bf16_matmul_gflop_s(t)})
        print(
            f"ceilings, {t} thread(s): stream {stream}, bf16 peak {rows[-1]['gflop_s']:.1f} GFLOP/s",
            flush=True,
        )
    return rows


def run_kernel_study(
    config: dict, options: dict, *, build_json: str, out: str, code_digest: str
) -> pd.DataFrame:
    shapes = model_shapes(model_config(Path(build_json).parent))
    llc = last_level_cache_bytes()
    array_bytes = (options["stream_mib"] or 4 * llc // 2**20) * 2**20
    ceilings = pd.DataFrame(ceiling_rows(options["threads"], array_bytes))
    ceilings["status"], ceilings["error"] = "ok", ""
    triad = ceilings[ceilings["kernel"] == "stream_triad"].set_index("threads")["gb_s"].to_dict()
    peak = ceilings[ceilings["kernel"] == "bf16_matmul_peak"].set_index("threads")["gflop_s"].to_dict()
    rows = kernel_rows(
        shapes,
        options["kernels"],
        options["batch_sizes"],
        options["threads"],
        options["group_size"],
        options["repeats"],
        CacheFlusher(llc),
    )
    kernels = pd.DataFrame(rows)
    timed = kernels["status"] == "ok"
    rated = add_rates(kernels[timed].copy(), triad, peak)
    frame = pd.concat([ceilings, rated, kernels[~timed]], ignore_index=True)
    frame["llc_mib"] = llc / 2**20
    frame["stream_array_mib"] = array_bytes / 2**20
    frame = stamp(frame, config, code_digest)
    write_parquet(frame, out)
    best = rated[rated["m"] == 1].sort_values("pct_of_ceiling", ascending=False)
    print(best[["kernel", "layer", "threads", "us", "gb_s", "pct_of_ceiling"]].head(12).to_string())
    return frame
