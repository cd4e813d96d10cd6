"""The run's PNG: the size it promises, something drawn on it, events drawn, and written atomically."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import imread

from skenario.results.plot import _hh_mm, plot_run
from skenario.results.rundata import RunData


def _colours(rgb: np.ndarray) -> int:
    """How many distinct colours an (n, 3) array of 0..1 floats holds."""
    packed = (np.round(rgb * 255).astype(np.uint32) * np.array([1 << 16, 1 << 8, 1], dtype=np.uint32)).sum(axis=1)
    return int(np.count_nonzero(np.bincount(packed)))


def test_the_png_has_the_promised_size_and_is_not_blank(run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "run.png"
    plot_run(run, path)
    pixels = imread(path)
    assert pixels.shape[:2] == (1100, 1400)
    rgb = pixels[..., :3].reshape(-1, 3)
    assert _colours(rgb) > 50  # lines, text and antialiasing, not one flat colour
    assert (rgb.min(axis=1) < 0.5).mean() > 0.005  # a fair share of dark ink
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left beside it


def test_events_are_drawn(run: RunData, make_run: Callable[..., RunData], tmp_path: Path) -> None:
    without = make_run(timeline=[])
    plot_run(run, tmp_path / "with.png")
    plot_run(without, tmp_path / "without.png")
    assert not np.array_equal(imread(tmp_path / "with.png"), imread(tmp_path / "without.png"))


def test_user_text_is_not_parsed_as_mathtext(make_run: Callable[..., RunData], tmp_path: Path) -> None:
    timeline = [(5_000_000_000, r"$\alpha_{", "Patch", "traffic", "x", {})]
    plot_run(make_run(name=r"price $5 \frac", timeline=timeline), tmp_path / "odd.png")
    assert imread(tmp_path / "odd.png").shape[:2] == (1100, 1400)


def test_a_failed_write_keeps_the_previous_file(run: RunData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def half_written(self: Figure, target: Path, **kwargs: object) -> None:
        Path(target).write_bytes(b"half a png")
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", half_written)
    path = tmp_path / "run.png"
    path.write_bytes(b"previous")
    with pytest.raises(OSError, match="disk full"):
        plot_run(run, path)
    assert path.read_bytes() == b"previous"
    assert list(tmp_path.iterdir()) == [path]


def test_a_real_run_plots(real_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "real.png"
    plot_run(real_run, path)
    rgb = imread(path)[..., :3].reshape(-1, 3)
    assert imread(path).shape[:2] == (1100, 1400)
    assert _colours(rgb) > 50


def test_a_run_with_nothing_recorded_still_plots(empty_run: RunData, tmp_path: Path) -> None:
    plot_run(empty_run, tmp_path / "empty.png")
    assert imread(tmp_path / "empty.png").shape[:2] == (1100, 1400)


@pytest.mark.parametrize(("seconds", "tick"), [(0, "00:00"), (300, "00:05"), (3599.6, "01:00"), (93_600, "1d 02:00")])
def test_the_time_axis_reads_hh_mm_from_the_start(seconds: float, tick: str) -> None:
    assert _hh_mm(seconds) == tick
