"""The one way edgebench writes a file: to a temp file in the same folder, then a rename, so readers
never see half a file. Parquet tables also carry the writing job's provenance once per table, as
key-value metadata under the key `edgebench` (see edgebench.jobs)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas, pyarrow and numpy load only when a table or array is written
    import numpy as np
    import pandas as pd

METADATA_KEY = b"edgebench"


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temp path beside `path`; renamed onto it when the block succeeds, removed when it fails."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # the temp name ends in the target's suffix: writers that pick a format by suffix still can
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike, context: dict | None = None) -> None:
    """The table, with the job context (by default the running job's) stored once as metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from edgebench.jobs import current_context

    context = current_context() if context is None else context
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if context:
        stamp = json.dumps(context, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), METADATA_KEY: stamp})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def table_context(path: str | os.PathLike) -> dict:
    """The provenance a table was written with ({} when it carries none)."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata or {}
    return json.loads(metadata[METADATA_KEY]) if METADATA_KEY in metadata else {}


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def save_npy(array: np.ndarray, path: str | os.PathLike) -> None:
    import numpy as np

    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, array)
