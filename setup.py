"""The page sources (`web/`) and the sample project (`sample/`) live at the top of the
repository, beside `src/`; a wheel or a non-editable install carries them inside the
package, as `ragweb/web` and `ragweb/sample`, where `rag web` looks first
(`ragweb.webbuild._data_dirs`). An editable install reads them from the checkout.
Of `sample/`, only the files `ragweb.webbuild.SAMPLE_FILES` names are shipped (in the
wheel and the sdist), so a file left there (a `ctx.json`) is not; of `web/`, only
`PAGE_FILES` go in the wheel."""

import ast
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def listed_files(name: str) -> list[str]:
    """The tuple ``name`` of src/ragweb/webbuild.py (`SAMPLE_FILES`, `PAGE_FILES`), read
    without importing ragweb (not installed yet)."""
    tree = ast.parse((HERE / "src" / "ragweb" / "webbuild.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise RuntimeError(f"{name} not found in src/ragweb/webbuild.py")


class BuildWithPage(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for folder, names in (("web", listed_files("PAGE_FILES")), ("sample", listed_files("SAMPLE_FILES"))):
            for name in names:
                if (HERE / folder / name).is_file():
                    dest = Path(self.build_lib) / "ragweb" / folder / name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(HERE / folder / name, dest)

    def get_source_files(self):
        # (what the sdist takes besides MANIFEST.in: the sample's files, by name)
        return super().get_source_files() + [f"sample/{name}" for name in listed_files("SAMPLE_FILES")
                                             if (HERE / "sample" / name).is_file()]


setup(cmdclass={"build_py": BuildWithPage})
