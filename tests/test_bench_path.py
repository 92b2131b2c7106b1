"""Which ragweb the bench's scripts measure: the package that PYTHONPATH names, else the
src/ folder of the checkout the script is in."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = ("tune_dev", "bench_docs", "where_lost", "bench_browser")


def _imported(tmp_path: Path, pythonpath: str | None) -> list[str]:
    """The file of the ragweb each bench script imports, run as `python bench/SCRIPT.py` would be."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    code = ("import runpy, sys\n"
            "sys.argv = ['x']\n"
            f"for s in {SCRIPTS!r}:\n"
            f"    sys.path[:] = [p for p in sys.path if p not in ({str(REPO / 'src')!r}, {str(REPO / 'bench')!r})]\n"
            "    for m in [m for m in sys.modules if m == 'ragweb' or m.startswith('ragweb.')]:\n"
            "        del sys.modules[m]\n"
            f"    runpy.run_path({str(REPO / 'bench')!r} + '/' + s + '.py', run_name='not_main')\n"
            "    import ragweb\n"
            "    print(ragweb.__file__)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_bench_script_measures_the_ragweb_pythonpath_names(tmp_path):
    # another checkout's src (an old commit's worktree, a helper's clone): here a link to this one's package
    other = tmp_path / "other" / "src"
    other.mkdir(parents=True)
    (other / "ragweb").symlink_to(REPO / "src" / "ragweb", target_is_directory=True)
    assert _imported(tmp_path, str(other)) == [str(other / "ragweb" / "__init__.py")] * len(SCRIPTS)


def test_without_pythonpath_a_bench_script_measures_its_own_checkout(tmp_path):
    assert _imported(tmp_path, None) == [str(REPO / "src" / "ragweb" / "__init__.py")] * len(SCRIPTS)
