"""scripts/wheel.sh --check refuses a wheel that a plain glibc >= 2.28 system could not load or
that lacks what a user gets (the stubs, the console script), and accepts one that has it all.

The wheels here are small stand-ins: an extension module compiled with the system's cc (one
that calls pthread_create links against GLIBC_2.34 on a newer glibc, as a native build of the
real module does), zipped with the files a wheel of annbench carries."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WHEEL = "annbench-0.1.0-cp39-abi3-manylinux_2_28_x86_64.whl"
PLAIN = "int annbench_answer(void) { return 42; }\n"
THREADS = (
    "#include <pthread.h>\n"
    "static void *run(void *arg) { return arg; }\n"
    "int annbench_start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n"
)


def fake_wheel(tmp_path: Path, source: str, *, leave_out: str = "") -> Path:
    c = tmp_path / "module.c"
    c.write_text(source)
    so = tmp_path / "_annbench.abi3.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(so), str(c)], check=True)
    info = "annbench-0.1.0.dist-info"
    files = {
        "annbench/__init__.py": "",
        "annbench/_annbench.pyi": "",
        "annbench/py.typed": "",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: annbench\nVersion: 0.1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
        "Tag: cp39-abi3-manylinux_2_28_x86_64\n",
        f"{info}/entry_points.txt": "[console_scripts]\nannbench=annbench.cli:main\n",
    }
    wheel = tmp_path / WHEEL
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(so, "annbench/_annbench.abi3.so")
        for name, text in files.items():
            if name != leave_out:
                z.writestr(name, text)
        # auditwheel examines the files RECORD lists (hashes are not checked).
        names = z.namelist() + [f"{info}/RECORD"]
        z.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in names))
    return wheel


def check(wheel: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "wheel.sh"), "--check", str(wheel)],
        capture_output=True, text=True, env=os.environ.copy(),
    )


def glibc_at_least(major: int, minor: int) -> bool:
    found = os.confstr("CS_GNU_LIBC_VERSION") or ""
    parts = found.split()[-1].split(".") if found.startswith("glibc") else ["0", "0"]
    return (int(parts[0]), int(parts[1])) >= (major, minor)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stand-in wheel is tagged x86_64")
def test_a_complete_wheel_with_old_symbols_is_accepted(tmp_path: Path):
    done = check(fake_wheel(tmp_path, PLAIN))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "accepted as manylinux_2_28" in done.stderr


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stand-in wheel is tagged x86_64")
@pytest.mark.parametrize(
    ("leave_out", "said"),
    [
        ("annbench/py.typed", "lacks annbench/py.typed (the type stubs)"),
        ("annbench/_annbench.pyi", "lacks annbench/_annbench.pyi (the type stubs)"),
        ("annbench-0.1.0.dist-info/entry_points.txt", "lacks the annbench console script"),
    ],
)
def test_a_wheel_without_stubs_or_command_is_refused(tmp_path: Path, leave_out: str, said: str):
    done = check(fake_wheel(tmp_path, PLAIN, leave_out=leave_out))
    assert done.returncode == 1 and said in done.stderr, done.stdout + done.stderr


@pytest.mark.skipif(
    os.uname().machine != "x86_64" or not glibc_at_least(2, 34),
    reason="needs an x86_64 glibc >= 2.34 (pthread_create@GLIBC_2.34) to build the stand-in",
)
def test_a_module_needing_a_newer_glibc_is_refused(tmp_path: Path):
    done = check(fake_wheel(tmp_path, THREADS))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "auditwheel does not accept manylinux_2_28" in done.stderr
    assert "manylinux_2_34" in done.stdout  # auditwheel's own account of the tag it needs
