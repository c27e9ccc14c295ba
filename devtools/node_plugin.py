"""The OpenCode plugin (``plait.ts``) as JavaScript that plain Node runs.

The plugin is TypeScript with type annotations only; TypeScript's ``transpileModule`` strips them
into an ES module. The compiler is the ``typescript`` package pinned in the plugin's
``package.json``: found in ``PLAIT_TYPESCRIPT`` (a ``node_modules`` folder), in the test cache
that ``tests/hosts/opencode/test_opencode_e2e.py`` fills, or installed once with npm into the user
cache dir.
The load bench and the tests that drive the real plugin from Node use this.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import platformdirs

from plait.adapters.hosts.opencode.install import plugin_source
from plait.state.base.errors import UsageError

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent.parent / "adapters" / "hosts" / "opencode" / "package.json"
TRANSPILE = """
const ts = require(process.argv[1]);
const fs = require("node:fs");
const source = fs.readFileSync(0, "utf8");
const out = ts.transpileModule(source, {
  compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
});
process.stdout.write(out.outputText);
"""


def typescript_version() -> str:
    """The TypeScript version the plugin's package.json pins."""
    from importlib import resources

    try:
        text = resources.files("plait.adapters.hosts.opencode").joinpath("package.json").read_text()
    except (FileNotFoundError, ModuleNotFoundError):
        text = MANIFEST.read_text()
    return str(json.loads(text)["devDependencies"]["typescript"])


def candidate_modules() -> list[Path]:
    """Folders that may hold ``typescript``: the override, the test cache, plait's cache."""
    found = [Path(os.environ["PLAIT_TYPESCRIPT"])] if os.environ.get("PLAIT_TYPESCRIPT") else []
    tests = os.environ.get("PLAIT_TEST_CACHE") or Path.home() / ".cache" / "plait-tests"
    found += sorted(Path(tests).glob("opencode/*/typecheck/node_modules"))
    found.append(own_cache() / "node_modules")
    return found


def own_cache() -> Path:
    """Where plait installs the compiler when no other copy is found."""
    return Path(platformdirs.user_cache_dir("plait", appauthor=False)) / "typescript"


def typescript_module() -> Path:
    """The ``typescript`` package folder, installed with npm on first use."""
    for modules in candidate_modules():
        if (modules / "typescript" / "package.json").is_file():
            return modules / "typescript"
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise UsageError("driving the OpenCode plugin needs node and npm on PATH")
    cache = own_cache()
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "package.json").write_text('{"private": true}\n')
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run([*command, f"typescript@{typescript_version()}"], cwd=cache, check=True)
    return cache / "node_modules" / "typescript"


def transpile(source: str) -> str:
    """TypeScript source as an ES module (types stripped, nothing else changed)."""
    node = shutil.which("node")
    if node is None:
        raise UsageError("driving the OpenCode plugin needs node on PATH")
    result = subprocess.run(
        [node, "-e", TRANSPILE, str(typescript_module())],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise UsageError(f"cannot transpile the plugin: {result.stderr.strip()[-500:]}")
    return result.stdout


def plugin_as_javascript(target: Path, source: Path | None = None) -> Path:
    """Write the plugin (this plait's, or ``source``) as ``target`` (an ``.mjs`` file)."""
    text = source.read_text(encoding="utf-8") if source is not None else plugin_source()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(transpile(text), encoding="utf-8")
    return target


__all__ = ["plugin_as_javascript", "transpile", "typescript_module"]
