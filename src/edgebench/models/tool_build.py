"""Builds made by an engine's own converter from the bf16 reference, run under that engine's
environment: OpenVINO IR through optimum-intel's export with NNCF weight compression (`openvino`),
and ONNX Runtime GenAI's model builder (`ortgenai`).

build.json records what the converter was asked for (bits, group size, symmetry), its versions, the
folder's bytes, and bits per weight as weight-file bits over the reference's parameters, so scales,
zero points and any layer the tool kept at higher precision count too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from edgebench.engines.token_parity import REFERENCE_TOKENIZER
from edgebench.envs.record import record_python, require_runnable
from edgebench.models.build_record import fresh_build_dir, read_build_json, stopwatch, write_build_json
from edgebench.models.gptq import BuildError

TOOL_TIMEOUT_S = 3600  # a 1.5B model's export and compression on a CPU of few cores, with room to spare
WEIGHT_FILES = {"openvino": ("openvino_model.bin",), "ortgenai": ("model.onnx.data", "model.onnx")}
TOOL_PACKAGES = {
    "openvino": ("openvino", "openvino-genai", "optimum-intel", "nncf", "transformers"),
    "ortgenai": ("onnxruntime-genai", "onnxruntime", "onnx", "transformers"),
}


def openvino_command(python: str, reference_dir: Path, out_dir: Path, spec: dict) -> list[str]:
    """optimum-cli's OpenVINO export; weights below 16 bits compressed by NNCF over every layer
    the ratio covers (NNCF keeps embeddings and the LM head at 8 bits, its default)."""
    formats = {4: "int4", 8: "int8", 16: "fp16"}
    command = [str(Path(python).parent / "optimum-cli"), "export", "openvino", "--model", str(reference_dir)]
    command += ["--task", "text-generation-with-past", "--weight-format", formats[spec["bits"]]]
    if spec["bits"] < 16:
        command += ["--group-size", str(spec.get("group_size") or -1)]
        command += ["--sym"] if spec.get("sym", True) else []
    if spec["bits"] == 4:
        command += ["--ratio", "1.0"]  # every ratio-defining layer at 4 bits, none left at 8
    return [*command, str(out_dir)]


def ortgenai_command(python: str, reference_dir: Path, out_dir: Path, spec: dict) -> list[str]:
    """ORT GenAI's model builder for the CPU execution provider (its MatMulNBits accuracy level 4:
    int8 activations where the CPU has the instructions)."""
    precisions = {4: "int4", 8: "int8", 32: "fp32"}
    command = [python, "-m", "onnxruntime_genai.models.builder", "-i", str(reference_dir), "-o", str(out_dir)]
    command += [
        "-p",
        precisions[spec["bits"]],
        "-e",
        "cpu",
        "-c",
        str(out_dir.parent / f".{out_dir.name}.cache"),
    ]
    options = ["hf_token=false"]  # a local folder: never the hub
    if spec["bits"] < 32:
        symmetric = spec.get("sym", True)
        options += [f"block_size={spec.get('group_size') or 32}", f"is_symmetric={str(symmetric).lower()}"]
        options += ["accuracy_level=4"]
        if not symmetric:
            # builder 0.18's asymmetric embedding shared with the LM head does not load in ORT
            # ("Type (tensor(uint8)) of output arg (/model/embed_tokens/Reshape/output_0)"): keep two
            options += ["shared_embeddings=false"]
    command += ["--extra_options", *options]
    return command


COMMANDS = {"openvino": openvino_command, "ortgenai": ortgenai_command}


def run_tool(command: list[str], what: str, timeout_s: float = TOOL_TIMEOUT_S) -> None:
    """The converter in its own process, offline; its output goes to the job's log."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    print("+", " ".join(command), flush=True)
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, env=environment, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise BuildError(f"{what}: no result within {timeout_s:.0f} s") from error
    print(result.stdout[-6000:], result.stderr[-12000:], sep="\n", flush=True)
    if result.returncode != 0:
        last = [line for line in result.stderr.splitlines() if line.strip()][-2:]
        raise BuildError(f"{what} exited with {result.returncode}: {' '.join(last)[:500]}")


def tool_versions(record: dict, method: str) -> dict[str, str]:
    versions = record.get("versions", {})
    return {name: versions.get(name, "unknown") for name in TOOL_PACKAGES[method]}


def build_with_tool(reference_dir: Path, out_dir: Path, name: str, spec: dict, environment: dict) -> dict:
    """Run the method's converter under `environment` (its record) and write build.json."""
    method = spec["method"]
    reference = read_build_json(reference_dir)
    require_runnable(environment)
    python = record_python(environment or None)
    with fresh_build_dir(out_dir) as tmp, stopwatch() as clock:
        run_tool(COMMANDS[method](python, reference_dir, tmp, spec), f"{method} build {name}")
        # what the engine's own tokenizer is checked against at every load (token-id parity)
        shutil.copyfile(reference_dir / "tokenizer.json", tmp / REFERENCE_TOKENIZER)
        weight_bytes = sum((tmp / f).stat().st_size for f in WEIGHT_FILES[method] if (tmp / f).is_file())
    shutil.rmtree(
        out_dir.parent / f".{out_dir.name}.cache", ignore_errors=True
    )  # the builder's downloads cache
    return write_build_json(
        out_dir,
        {
            "build": name,
            "method": method,
            "bits": spec["bits"],
            "group_size": spec.get("group_size") if spec["bits"] < 16 else None,
            "sym": spec.get("sym", True) if spec["bits"] < 16 else None,
            "format": {"openvino": "openvino-ir", "ortgenai": "onnx-genai"}[method],
            "bits_per_weight": 8 * weight_bytes / reference["parameters"],
            "parameters": reference["parameters"],
            "build_s": clock["seconds"],
            "source": "reference",
            "source_digest": "",
            "tool_versions": tool_versions(environment, method),
            "environment": environment.get("digest", "main"),
        },
    )
