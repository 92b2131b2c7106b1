"""The page sources (`web/`) and the sample project (`sample/`) live at the top of the
repository, beside `src/`; a wheel or a non-editable install carries them inside the
package, as `ragweb/web` and `ragweb/sample`, where `rag web` looks first
(`ragweb.webbuild._data_dirs`). An editable install reads them from the checkout."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithPage(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in ("web", "sample"):
            if (HERE / name).is_dir():
                shutil.copytree(HERE / name, Path(self.build_lib) / "ragweb" / name, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", ".*"))


setup(cmdclass={"build_py": BuildWithPage})
