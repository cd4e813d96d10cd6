"""Room kept beside the store for deleting runs when its disk is full.

SQLite records a deletion before it makes it (in WAL mode, pages appended to `runs.sqlite-wal`),
and copies the log into the file later (a checkpoint, which may grow the file). On a disk with no
byte free neither can happen, so a full disk would leave a store that cannot even be cleaned up.
The store keeps a file of real, allocated blocks beside it (`runs.sqlite-reserve`, as large as the
store, between `SMALLEST` and `LARGEST`: more than a log's worth at SQLite's automatic checkpoint,
4 MiB); `release` gives those blocks back so `runs gc` and `runs rm` can copy the log into the file
and record their deletions, one run at a time, and `keep` makes the file again once there is room.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

RESERVE = "runs.sqlite-reserve"
SMALLEST = 256 * 1024
LARGEST = 16 * 2**20


def wanted(database: Path) -> int:
    """The reserve's size for this store: the file's and its log's, within SMALLEST..LARGEST."""
    size = sum(_size(database.with_name(database.name + suffix)) for suffix in ("", "-wal"))
    return min(LARGEST, max(SMALLEST, size))


def keep(database: Path) -> None:
    """Make (or enlarge) the reserve beside `database` where the disk has room for it and as much again;
    a disk with less is left alone (the reserve is a help, never a reason to fail)."""
    path = database.with_name(RESERVE)
    size = wanted(database)
    if _size(path) >= size // 2:
        return
    try:
        if shutil.disk_usage(path.parent).free < 2 * size:
            return
        with open(path, "wb") as file:
            _allocate(file.fileno(), size)
    except OSError:
        path.unlink(missing_ok=True)


def release(database: Path) -> bool:
    """Give the reserve's blocks back to the disk; whether there was one."""
    path = database.with_name(RESERVE)
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def _allocate(fd: int, size: int) -> None:
    """Blocks on disk for `size` bytes (a sparse file would reserve nothing)."""
    if hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # a file system without it: write the bytes
                raise
    block = bytes(64 * 1024)
    for _ in range(0, size, len(block)):
        os.write(fd, block)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
