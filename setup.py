"""The page sources (`web/`) and the sample project (`sample/`) live at the top of the
repository, beside `src/`; a wheel or a non-editable install carries them inside the
package, as `ragweb/web` and `ragweb/sample`, where `rag web` looks first
(`ragweb.webbuild._data_dirs`). An editable install reads them from the checkout.
Of `sample/`, only the files `ragweb.webbuild.SAMPLE_FILES` names are shipped (in the
wheel and the sdist), so a file left there (a `ctx.json`) is not."""

import ast
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def sample_files() -> list[str]:
    """`SAMPLE_FILES` of src/ragweb/webbuild.py, read without importing ragweb (not installed yet)."""
    tree = ast.parse((HERE / "src" / "ragweb" / "webbuild.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SAMPLE_FILES" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise RuntimeError("SAMPLE_FILES not found in src/ragweb/webbuild.py")


class BuildWithPage(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if (HERE / "web").is_dir():
            shutil.copytree(HERE / "web", Path(self.build_lib) / "ragweb" / "web", dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".*"))
        for name in sample_files():
            if (HERE / "sample" / name).is_file():
                dest = Path(self.build_lib) / "ragweb" / "sample" / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(HERE / "sample" / name, dest)

    def get_source_files(self):
        # (what the sdist takes besides MANIFEST.in: the sample's files, by name)
        return super().get_source_files() + [f"sample/{name}" for name in sample_files()
                                             if (HERE / "sample" / name).is_file()]


setup(cmdclass={"build_py": BuildWithPage})
