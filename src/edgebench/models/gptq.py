"""GPTQ builds through gptqmodel on CPU, calibrated on texts that ship in the repository."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from edgebench.models.build_record import file_digest, fresh_build_dir, stopwatch, write_build_json

CALIBRATION_DIR = Path(__file__).resolve().parents[1] / "data" / "calibration"


class BuildError(ValueError):
    """A build that cannot be made as configured (say which value and why)."""


def linear_input_widths(config: dict) -> dict[str, int]:
    """Input width of every quantized Linear family of a Llama-style model."""
    hidden = int(config["hidden_size"])
    return {
        "hidden_size (q/k/v/o, gate/up inputs)": hidden,
        "intermediate_size (down_proj input)": int(config["intermediate_size"]),
    }


def check_group_size(group_size: int, config: dict) -> None:
    """Every layer width must split into whole groups; say which width does not."""
    for name, width in linear_input_widths(config).items():
        if width % group_size:
            raise BuildError(
                f"group_size {group_size} does not divide the layer width {width} ({name}); "
                f"choose a group size that divides {width}"
            )


def calibration_texts(limit: int) -> list[str]:
    lines = []
    for path in sorted(CALIBRATION_DIR.glob("*.txt")):
        lines += [line.strip().replace("\\n", "\n") for line in path.read_text().splitlines() if line.strip()]
    return lines[:limit]


def bits_per_weight(bits: int, group_size: int) -> float:
    """Stored bits per quantized Linear weight: GPTQ format keeps a 16-bit scale and a packed
    `bits`-wide zero point per group, symmetric or not (embeddings and norms stay bf16)."""
    return bits + (16 + bits) / group_size


def check_saved_tensors_finite(out_dir: Path, name: str) -> None:
    """Read back what ships: any NaN/Inf in a floating tensor fails the build, naming the tensor."""
    import torch
    from safetensors.torch import load_file

    files = sorted(out_dir.glob("*.safetensors"))
    if not files:
        raise BuildError(f"build {name} wrote no safetensors files into {out_dir}")
    for path in files:
        for key, tensor in load_file(str(path)).items():
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                raise BuildError(f"build {name}: tensor {key} in {path.name} holds NaN/Inf")


def build_gptq(reference_dir: Path, out_dir: Path, name: str, spec: dict) -> dict:
    """Quantize the reference with GPTQ and write it in GPTQ format, plus build.json."""
    with fresh_build_dir(out_dir) as tmp:
        return _build_gptq(reference_dir, tmp, name, spec)


def _build_gptq(reference_dir: Path, out_dir: Path, name: str, spec: dict) -> dict:
    config = json.loads((reference_dir / "config.json").read_text())
    check_group_size(int(spec["group_size"]), config)
    texts = calibration_texts(int(spec.get("calibration_samples", 64)))
    if not texts:
        raise BuildError(f"no calibration texts in {CALIBRATION_DIR}")
    os.environ.setdefault("GPTQMODEL_CPU_WORKERS", str(len(os.sched_getaffinity(0))))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    from gptqmodel import GPTQModel, QuantizeConfig

    out_dir.mkdir(parents=True, exist_ok=True)
    with stopwatch() as clock:
        quant_config = QuantizeConfig(
            bits=int(spec["bits"]),
            group_size=int(spec["group_size"]),
            sym=bool(spec["sym"]),
            desc_act=bool(spec.get("desc_act", False)),
            damp_percent=float(spec.get("damp_percent", 0.05)),
        )
        # absolute: quantize below runs in the build folder and may read the checkpoint again
        model = GPTQModel.load(
            str(reference_dir.resolve()), quant_config, device="cpu", trust_remote_code=False
        )
        parameters = int(sum(p.numel() for p in model.model.parameters()))  # before packing
        # gptqmodel writes its per-layer loss log to ./logs: keep it with the build, not in the repo
        with contextlib.chdir(out_dir):
            model.quantize(texts, batch_size=1)
        model.save(str(out_dir))
        check_saved_tensors_finite(out_dir, name)
    return write_build_json(
        out_dir,
        {
            "build": name,
            "method": "gptq",
            "bits": int(spec["bits"]),
            "group_size": int(spec["group_size"]),
            "sym": bool(spec["sym"]),
            "format": "gptq",
            "bits_per_weight": bits_per_weight(int(spec["bits"]), int(spec["group_size"])),
            "parameters": parameters,
            "build_s": clock["seconds"],
            "source": "reference",
            "source_digest": file_digest(reference_dir / "model.safetensors"),
            "calibration_texts": len(texts),
        },
    )
