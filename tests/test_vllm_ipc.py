"""Where vLLM's socket files go: a folder of the process's own, under a parent short enough for a
Unix socket's path."""

import tempfile
import uuid
from pathlib import Path

import pytest
import zmq

from edgebench.engines.vllm_ipc import PARENT_MAX, PREFIX, socket_parent


def test_the_longest_parent_accepted_binds_vllms_socket_and_one_longer_gives_way():
    with tempfile.TemporaryDirectory(dir="/tmp") as base:  # a short base on every POSIX machine
        longest = Path(base) / ("p" * (PARENT_MAX - len(base) - 1))
        longest.mkdir()
        too_long = longest.with_name(longest.name + "p")
        too_long.mkdir()
        assert len(str(longest)) == PARENT_MAX
        assert socket_parent([str(too_long), str(longest)]) == str(longest)
        # the path vLLM would bind: a uuid in a folder made like edgebench's, as zmq binds it
        folder = tempfile.mkdtemp(prefix=PREFIX, dir=longest)
        socket = zmq.Context.instance().socket(zmq.PULL)
        try:
            socket.bind(f"ipc://{folder}/{uuid.uuid4()}")
        finally:
            socket.close(linger=0)


def test_no_usable_folder_is_one_error_naming_them(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(RuntimeError, match="missing.*set TMPDIR"):
        socket_parent([missing])
