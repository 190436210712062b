"""A private folder for vLLM's inter-process sockets, removed when the process that made it exits.

vLLM names a fresh socket file in its RPC base path (the system's temp folder by default) for each
channel between its front end, engine core and worker, and never unlinks them: every engine start
left seven socket files in /tmp, hundreds over a study. One folder per process keeps them together
and gone at its exit. One per process rather than per engine: vLLM caches its environment once an
engine core runs in a process, so a second engine there names the first one's path anyway, and a
socket unlinked while another engine of the process still uses it could not be reached again.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

RPC_BASE_VARIABLE = "VLLM_RPC_BASE_PATH"
PREFIX = "edgebench-vllm-"
# A Unix socket's path holds at most 107 bytes; vLLM adds "/" and a 36-character uuid to its base.
SOCKET_PATH_MAX = 107
SOCKET_NAME_LEN = 1 + 36
FOLDER_NAME_LEN = len(PREFIX) + 8  # mkdtemp's random suffix is 8 characters
PARENT_MAX = SOCKET_PATH_MAX - 1 - FOLDER_NAME_LEN - SOCKET_NAME_LEN


def socket_parent(candidates: list[str]) -> str:
    """The first folder among `candidates` under which vLLM's socket paths fit. A long TMPDIR (a
    cluster job's, a test's) would make vLLM's socket bind fail, so the system's /tmp is tried next."""
    for folder in candidates:
        fits = len(os.fsencode(folder)) <= PARENT_MAX
        if fits and os.path.isdir(folder) and os.access(folder, os.W_OK):
            return folder
    raise RuntimeError(
        f"no folder for vLLM's sockets among {candidates}: each is too long for a socket path "
        f"({SOCKET_PATH_MAX} bytes) or not writable; set TMPDIR to a short writable folder"
    )


@functools.cache
def private_ipc_dir() -> Path:
    """This process's socket folder (made on first use, removed at its exit), set as vLLM's RPC base
    path for the engine processes it starts. Not part of an arm's recorded environment: where a
    socket lives changes no measurement."""
    parent = socket_parent([tempfile.gettempdir(), "/tmp"])
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    os.environ[RPC_BASE_VARIABLE] = str(path)
    return path
