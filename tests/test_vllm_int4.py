"""An int4 build on vLLM's W4A8 kernel in multi-process mode: on a CPU with the kernel's flags the
first generate returns tokens (an AMX CPU once died here with SIGILL before tile permission was
asked for, in the worker process); on a CPU without them the arm is refused by the flag it lacks,
before vLLM loads. W4A16 in multi-process mode is the end-to-end study's (tests/test_workflow.py):
its cold reps decode the GPTQ build there, or are rows refused by the flag, on every CPU."""

import pytest

from edgebench.engines.vllm_engine import UnsupportedArm, VllmEngine, check_supported
from edgebench.isa import missing_flags
from edgebench.procfs import cpu_flags

pytestmark = pytest.mark.workflow

TINY = {"kind": "tiny_random", "hidden_size": 128, "intermediate_size": 256, "layers": 1, "heads": 2}
TINY.update(kv_heads=1, vocab_size=512)


@pytest.fixture(scope="module")
def int4_build(tmp_path_factory):
    from edgebench.models.quantized import build_quantized
    from edgebench.models.reference import build_reference

    root = tmp_path_factory.mktemp("int4")
    build_reference(TINY, root / "reference")
    spec = {"method": "rtn", "bits": 4, "group_size": 64, "sym": True, "format": "gptq"}
    build_quantized(root / "reference", root / "rtn", "rtn-w4g64", spec, TINY)
    return root / "rtn"


def test_a_w4a8_build_decodes_in_multiprocess_vllm_or_is_refused_by_flag(int4_build):
    arm = {"int4_w4a8": True, "kv_cache_gib": 1}
    kernel = "int4_scaled_mm_cpu"
    missing = missing_flags(kernel, cpu_flags())
    engine = VllmEngine()
    if missing:
        with pytest.raises(UnsupportedArm, match=f"lacks {missing[0]}"):
            engine.load(str(int4_build), arm, max_model_len=128)
        assert engine.llm is None  # refused before vLLM started anything
        return
    assert check_supported(arm, cpu_flags(), {"bits": 4}) == kernel
    engine.load(str(int4_build), arm, max_model_len=128)  # multi-process: the default
    try:
        tokens = engine.generate([1, 2, 3, 4], 16)
    finally:
        engine.close()
    assert len(tokens) == 16 and all(0 <= t < 512 for t in tokens)
