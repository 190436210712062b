"""Live tensors counted once per storage, with the pages actually resident, by model component."""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Iterable

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")

# Order matters: the first match names the component (a rotary buffer lives under self_attn).
_COMPONENTS = (
    ("kv cache", ("kv_cache",)),
    ("rope cache", ("rotary", "cos_sin", "inv_freq")),
    ("embeddings", ("embed",)),
    ("lm_head", ("lm_head",)),
    ("norms", ("norm",)),
    ("attention", ("attn", "q_proj", "k_proj", "v_proj", "o_proj", "qkv")),
    ("mlp", ("mlp", "gate", "up_proj", "down_proj")),
)


def component_of(name: str) -> str:
    """Model component for a parameter/buffer/attribute name (unknown names: 'other model tensors')."""
    lowered = name.lower()
    for component, needles in _COMPONENTS:
        if any(n in lowered for n in needles):
            return component
    return "other model tensors"


def resident_bytes(ptr: int, nbytes: int, pagemap: str = "/proc/self/pagemap") -> tuple[int, int]:
    """(anonymous, file-backed) bytes of [ptr, ptr+nbytes) in present pages, from /proc/self/pagemap
    (bit 63 present, bit 61 file page or shared).

    A storage that was allocated but never touched (torch.empty of a big cache) costs no RssAnon,
    and weights mmap-ed from safetensors are file pages (RssFile): counting either at its nominal
    size would attribute memory that RssAnon does not hold. Storages under a page count as anonymous.
    """
    if nbytes < PAGE:
        return nbytes, 0
    first, last = ptr // PAGE, (ptr + nbytes - 1) // PAGE
    with open(pagemap, "rb") as handle:
        handle.seek(first * 8)
        entries = np.frombuffer(handle.read((last - first + 1) * 8), dtype=np.uint64)
    present = ((entries >> np.uint64(63)) & np.uint64(1)).astype(bool)
    file_page = ((entries >> np.uint64(61)) & np.uint64(1)).astype(bool)
    anon = int((present & ~file_page).sum()) * PAGE
    file = int((present & file_page).sum()) * PAGE
    return min(anon, nbytes), min(file, nbytes)


class StorageLedger:
    """Adds tensors under components; a storage already counted (a view, a tied weight, a shared
    RoPE table) is never counted again, whichever name reaches it second."""

    def __init__(self, resident=resident_bytes) -> None:
        self.seen: set[int] = set()
        self.components: dict[str, dict] = {}
        self._resident = resident

    def add(self, component: str, tensor) -> bool:
        storage = tensor.untyped_storage()
        ptr, nbytes = storage.data_ptr(), storage.nbytes()
        if nbytes == 0 or ptr in self.seen or tensor.device.type != "cpu":
            return False
        self.seen.add(ptr)
        entry = self.components.setdefault(
            component, {"allocated_bytes": 0, "anon_bytes": 0, "file_bytes": 0, "tensors": 0, "dtypes": set()}
        )
        anon, file = self._resident(ptr, nbytes)
        entry["allocated_bytes"] += nbytes
        entry["anon_bytes"] += anon
        entry["file_bytes"] += file
        entry["tensors"] += 1
        entry["dtypes"].add(str(tensor.dtype).replace("torch.", ""))
        return True

    def add_named(self, named: Iterable, classify=component_of) -> None:
        for name, tensor in named:
            if tensor is not None:
                self.add(classify(name), tensor)

    def rows(self) -> list[dict]:
        return [
            {
                "component": component,
                "mb": entry["anon_bytes"] / 2**20,
                "allocated_mb": entry["allocated_bytes"] / 2**20,
                "file_mb": entry["file_bytes"] / 2**20,
                "tensors": entry["tensors"],
                "detail": ",".join(sorted(entry["dtypes"])),
            }
            for component, entry in self.components.items()
        ]


def _reachable(value, path: str, depth: int):
    """(path, object) for objects a module attribute holds: itself, a closure's cells (the lambdas
    engines install as a layer's forward), and the attributes of helper objects such as kernels."""
    yield path, value
    if depth == 0:
        return
    cells = getattr(value, "__closure__", None) or ()
    for index, cell in enumerate(cells):
        try:
            yield from _reachable(cell.cell_contents, f"{path}.<closure{index}>", depth - 1)
        except ValueError:  # an empty cell
            continue
    if hasattr(value, "__dict__") and not isinstance(value, type) and type(value).__module__ != "builtins":
        for key, item in vars(value).items():
            yield from _reachable(item, f"{path}.{key}", depth - 1)


def module_held_objects(model, depth: int = 3) -> tuple[list, list]:
    """Tensors and oneDNN handlers kept as plain module attributes, in closures or kernel objects
    (not parameters or buffers): where engines keep repacked weight copies and caches that
    named_parameters() never shows. Returns ([(name, tensor)], [(name, handler)])."""
    import torch

    tensors, handlers = [], []
    for module_name, module in model.named_modules():
        for key, value in vars(module).items():
            if key.startswith("_") or isinstance(value, torch.nn.Module):
                continue
            for path, obj in _reachable(value, f"{module_name}.{key}", depth):
                if isinstance(obj, torch.Tensor):
                    tensors.append((path, obj))
                elif type(obj).__name__ == "CPUDNNLGEMMHandler":
                    handlers.append((path, obj))
    return tensors, handlers


def onednn_handler_rows(handlers: list, classify=component_of) -> list[dict]:
    """Weights oneDNN prepacked and owns (no tensor to see): n x k elements each, 2 bytes for the
    bf16 matmul handler behind `cpu_linear`, 1 byte for the int8 scaled-mm handler."""
    sizes: dict[str, list] = {}
    seen = set()
    for name, handler in handlers:
        if id(handler) in seen:
            continue
        seen.add(id(handler))
        itemsize = 2 if "cpu_linear" in name else 1
        entry = sizes.setdefault(classify(name), [0, 0])
        entry[0] += handler.n * handler.k * itemsize
        entry[1] += 1
    return [
        {
            "component": f"{component} (oneDNN-packed)",
            "mb": nbytes / 2**20,
            "allocated_mb": nbytes / 2**20,
            "tensors": count,
            "detail": "size from the handler's n x k; memory owned by oneDNN",
        }
        for component, (nbytes, count) in sizes.items()
    ]


def live_tensors() -> list:
    """Every tensor the garbage collector can reach (the catch-all after named ones)."""
    import torch

    return [obj for obj in gc.get_objects() if isinstance(obj, torch.Tensor)]


def model_ledger(model, kv_caches: Iterable = ()) -> tuple[StorageLedger, list[dict]]:
    """KV cache, parameters, buffers, tensors held by modules, then every other live tensor; and
    the oneDNN-owned weights as rows of their own."""
    ledger = StorageLedger()
    for cache in kv_caches:
        ledger.add("kv cache", cache)
    ledger.add_named(model.named_parameters(remove_duplicate=False))
    ledger.add_named(model.named_buffers(remove_duplicate=False))
    held, handlers = module_held_objects(model)
    ledger.add_named(held)
    for tensor in live_tensors():
        ledger.add("other live tensors", tensor)
    return ledger, onednn_handler_rows(handlers)


def malloc_view_mb() -> dict[str, float]:
    """glibc's own view (mallinfo2): bytes handed out, and freed bytes it still holds."""

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return {
        "malloc in use (arena + mmap)": (info.uordblks + info.hblkhd) / 2**20,
        "malloc free but held": info.fordblks / 2**20,
    }
