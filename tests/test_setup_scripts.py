"""The set-up a newcomer runs: Chromium for the browser test, and the local model.

scripts/setup-browser runs here against stand-ins (a fake apt-get and id on a PATH of
our own, a temporary place to look for Chromium), so every branch is seen without
installing anything. The llama-server build's progress filter is fed the real output
of a build; scripts/local-model setup runs on a prepared cache to show that a second
run costs seconds.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
import re
import shutil
import subprocess
import time

import pytest

from scripts.model import build_progress

ROOT = Path(__file__).resolve().parent.parent
SETUP_BROWSER = ROOT / "scripts" / "setup-browser"
LOCAL_MODEL = ROOT / "scripts" / "local-model"

# Real lines of a llama-server build (CMake's Makefile generator), abridged.
BUILD_OUTPUT = """\
[  0%] Building CXX object vendor/hash/CMakeFiles/vendor-hash.dir/hash.cpp.o
[  1%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o
[  3%] Linking CXX static library libvendor-hash.a
[  8%] Building CXX object ggml/src/CMakeFiles/ggml-base.dir/gguf.cpp.o
[ 16%] Building C object ggml/src/CMakeFiles/ggml-cpu.dir/ggml-cpu/ggml-cpu.c.o
In file included from /tmp/x.c:1: warning: unused variable
[ 25%] Building CXX object src/CMakeFiles/llama.dir/llama-arch.cpp.o
[ 53%] Building CXX object src/CMakeFiles/llama.dir/llama-model.cpp.o
[ 91%] Building CXX object tools/server/CMakeFiles/server-context.dir/server.cpp.o
[100%] Linking CXX executable ../../bin/llama-server
[100%] Built target llama-server
"""


# --- Chromium -------------------------------------------------------------------------


def fake_bin(tmp_path: Path, *, uid: int, apt: str | None) -> Path:
    """A PATH with bash, a fake `id` and, if given, a fake `apt-get` (its script)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bash = shutil.which("bash")
    assert bash is not None
    (bin_dir / "bash").symlink_to(bash)
    for name, body in {
        "id": f"echo {uid}\n",
        "mktemp": f'echo "{tmp_path}/apt.log"\n',
        "tail": 'exec /usr/bin/tail "$@"\n',
        "sed": 'exec /bin/sed "$@"\n',
        "rm": 'exec /bin/rm "$@"\n',
        **({"apt-get": apt} if apt is not None else {}),
    }.items():
        script = bin_dir / name
        script.write_text(f"#!{bash}\n{body}")
        script.chmod(0o755)
    return bin_dir


def setup_browser(tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "LOCAL_ASSISTANT_CHROMIUM_CANDIDATES": str(tmp_path / "chromium"),
    }
    return subprocess.run(
        [str(SETUP_BROWSER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_chromium_present_is_only_found(tmp_path: Path) -> None:
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    apt = 'echo "$@" >> "$HOME/apt-calls"\n'
    done = setup_browser(tmp_path, fake_bin(tmp_path, uid=0, apt=apt))
    assert done.returncode == 0
    assert done.stdout == f"setup: Chromium for the browser test: {browser}\n"
    assert not (tmp_path / "apt-calls").exists()


def test_debian_as_root_installs_chromium(tmp_path: Path) -> None:
    """apt-get update, then apt-get install -y chromium; then it is found."""
    apt = f"""echo "$@" >> "$HOME/apt-calls"
case "$*" in *install*) printf '#!/bin/sh\\n' > {tmp_path}/chromium; /bin/chmod +x {tmp_path}/chromium;; esac
"""
    done = setup_browser(tmp_path, fake_bin(tmp_path, uid=0, apt=apt))
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "apt-calls").read_text().splitlines()
    assert calls == ["update -qq", "install -y -qq chromium"]
    assert "installing Chromium" in done.stdout
    assert done.stdout.endswith(
        f"setup: Chromium for the browser test: {tmp_path / 'chromium'}\n"
    )


def test_failed_install_says_so_and_does_not_stop_the_setup(tmp_path: Path) -> None:
    apt = 'echo "E: Unable to locate package chromium" >&2; exit 100\n'
    done = setup_browser(tmp_path, fake_bin(tmp_path, uid=0, apt=apt))
    assert done.returncode == 0
    assert "could not install Chromium" in done.stdout
    assert "Unable to locate package chromium" in done.stdout


@pytest.mark.parametrize(
    ("uid", "apt"), [(1000, 'echo "$@" >> "$HOME/apt-calls"\n'), (0, None)]
)
def test_elsewhere_one_clear_line(tmp_path: Path, uid: int, apt: str | None) -> None:
    """Not root, or no apt-get: nothing is installed, one line says what to do."""
    done = setup_browser(tmp_path, fake_bin(tmp_path, uid=uid, apt=apt))
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    assert line.startswith("setup: Chromium not found; the browser test (tests/e2e)")
    assert "apt-get install chromium" in line
    assert "LOCAL_ASSISTANT_CHROMIUM=" in line
    assert not (tmp_path / "apt-calls").exists()


def test_setup_provides_the_browser() -> None:
    """scripts/setup calls it on every run, before anything can end the run early."""
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    calls = [m.start() for m in re.finditer(r"^scripts/setup-browser$", setup, re.M)]
    assert len(calls) == 1
    assert calls[0] < setup.index("exit")
    assert os.access(SETUP_BROWSER, os.X_OK)
    # CI installs nothing itself: the README's commands must do it.
    assert "apt-get" not in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


# --- the llama-server build -------------------------------------------------------------


def test_build_progress_shows_percent_and_time_left() -> None:
    log, out = io.StringIO(), io.StringIO()
    ticks = iter(float(t) for t in range(0, 1000, 5))  # 5 s per line
    percent = build_progress.run(
        io.StringIO(BUILD_OUTPUT),
        log,
        out,
        expected=480,
        what="llama-server build",
        monotonic=lambda: next(ticks),
    )
    assert percent == 100
    assert log.getvalue() == BUILD_OUTPUT  # the whole output is kept
    lines = out.getvalue().splitlines()
    # The estimate first, then each 10 % step once, timed by the build's own pace.
    assert lines[0] == "local-model: llama-server build 0% after 0:05, about 8 min left"
    assert (
        lines[1] == "local-model: llama-server build 16% after 0:25, about 2 min left"
    )
    assert [line.split()[3] for line in lines[1:-1]] == [
        "16%",
        "25%",
        "53%",
        "91%",
        "100%",
    ]
    assert lines[-2].endswith("less than a minute left")
    assert lines[-1] == "local-model: llama-server build finished after 1:00"


def test_build_progress_reports_at_least_every_minute() -> None:
    """A long step without a new percent still shows the build is alive."""
    output = "[ 20%] a\n" + "compiling...\n" * 5
    ticks = iter(float(t) for t in range(0, 1000, 40))
    out = io.StringIO()
    build_progress.run(
        io.StringIO(output), io.StringIO(), out, 600, "build", lambda: next(ticks)
    )
    assert out.getvalue().count("build 20%") == 3  # at 0:40, then after 80 and 160 s


@pytest.mark.parametrize(
    ("line", "percent"),
    [
        ("[ 45%] Building CXX object x.o", 45),
        ("[100%] Built target llama-server", 100),
        ("[120/300] Building CXX object x.o", 40),
        ("-- Configuring done", None),
        ("In file [ 45%] not at the start", None),
    ],
)
def test_build_progress_reads_make_and_ninja(line: str, percent: int | None) -> None:
    assert build_progress.percent_of(line) == percent


def test_a_second_model_setup_costs_seconds(tmp_path: Path) -> None:
    """With the build and the model in the cache, setup only checks them."""
    script = LOCAL_MODEL.read_text(encoding="utf-8")

    def value(name: str) -> str:
        return script.split(f"\n{name}=", 1)[1].split("\n", 1)[0]

    cache = tmp_path / "cache"
    build = f"llama.cpp-{value('LLAMA_VERSION')}-{value('BUILD_FLAVOR')}"
    server = cache / build / "llama-server"
    server.parent.mkdir(parents=True)
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    model = cache / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    (model.parent / f"{model.name}.sha256-ok").write_text(value("MODEL_SHA256"))

    started = time.monotonic()
    done = subprocess.run(
        [str(LOCAL_MODEL), "setup"],
        env={**os.environ, "LOCAL_ASSISTANT_MODEL_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 10
    assert "(already built)" in done.stderr
    assert "sha256 verified earlier" in done.stderr
    assert "ready in 0 s" in done.stderr
