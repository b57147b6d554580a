"""Vendor the pages' JavaScript libraries from npm into the package's static files: no CDN, ever.

    python scripts/vendor_js.py           # install js/package-lock.json's exact versions, copy the files
    python scripts/vendor_js.py --check   # the same into a temporary folder; exit 1 if anything differs

`js/package.json` pins each library to one version and `js/package-lock.json` pins the whole tree
with integrity hashes, so `npm ci` fetches exactly the same bytes on any machine. Only the files
listed in FILES are copied, each with its package's licence, to src/iclr_kg/web/static/vendor/;
MANIFEST.json records versions, licences and the SHA-256 of every copied file (a test checks it
offline; CI runs --check against the registry).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "js"
VENDOR = ROOT / "src" / "iclr_kg" / "web" / "static" / "vendor"

# package -> files to copy (paths inside the package)
FILES = {
    "codemirror": [
        "lib/codemirror.js",
        "lib/codemirror.css",
        "mode/sparql/sparql.js",
        "addon/hint/show-hint.js",
        "addon/hint/show-hint.css",
        "addon/edit/matchbrackets.js",
        "addon/edit/closebrackets.js",
    ],
    "vega": ["build/vega.min.js"],
    "vega-lite": ["build/vega-lite.min.js"],
    "vega-embed": ["build/vega-embed.min.js"],
    "vega-interpreter": ["build/vega-interpreter.min.js"],  # Vega without eval: our CSP allows no 'unsafe-eval'
    "cytoscape": ["dist/cytoscape.min.js"],
}
LICENCE_NAMES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE")


def install(into: Path) -> Path:
    """`npm ci` of the lockfile in `into` (no install scripts run); the node_modules folder."""
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(JS / name, into / name)
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], cwd=into, check=True
    )
    return into / "node_modules"


def vendor(modules: Path, target: Path) -> dict[str, object]:
    """Copy FILES and licences from `modules` to `target`; the manifest of what was copied."""
    manifest: dict[str, object] = {}
    for package, files in FILES.items():
        source = modules / package
        meta = json.loads((source / "package.json").read_text(encoding="utf-8"))
        out = target / package
        out.mkdir(parents=True, exist_ok=True)
        copied = {}
        for relative in files:
            destination = out / Path(relative).name
            shutil.copyfile(source / relative, destination)
            copied[destination.name] = hashlib.sha256(destination.read_bytes()).hexdigest()
        licence = next((source / n for n in LICENCE_NAMES if (source / n).is_file()), None)
        if licence is not None:
            shutil.copyfile(licence, out / "LICENSE")
        else:  # vega ships none in its npm package: say what its package.json declares, and where the text is
            repository = meta.get("repository", {})
            url = repository.get("url", repository) if isinstance(repository, dict) else repository
            url = url if "://" in url else f"https://github.com/{url}"  # npm's "owner/name" shorthand
            (out / "LICENSE").write_text(
                f"{package} {meta['version']}: licensed {meta.get('license')} (its package.json).\n"
                f"The npm package ships no licence file; the licence text is in its repository: {url}\n",
                encoding="utf-8",
            )
        copied["LICENSE"] = hashlib.sha256((out / "LICENSE").read_bytes()).hexdigest()
        manifest[package] = {"version": meta["version"], "license": meta.get("license"), "files": copied}
    (target / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the vendored files instead of writing them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        modules = install(Path(tmp))
        if not args.check:
            shutil.rmtree(VENDOR, ignore_errors=True)
            vendor(modules, VENDOR)
            print(f"vendored {', '.join(FILES)} into {VENDOR.relative_to(ROOT)}")
            return 0
        fresh = Path(tmp) / "fresh"
        vendor(modules, fresh)
        ours = {p.relative_to(VENDOR): p.read_bytes() for p in VENDOR.rglob("*") if p.is_file()}
        theirs = {p.relative_to(fresh): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
        differ = sorted(str(p) for p in ours.keys() | theirs.keys() if ours.get(p) != theirs.get(p))
        if differ:
            print(f"vendored files differ from js/package-lock.json: {', '.join(differ)}", file=sys.stderr)
            print("run `python scripts/vendor_js.py` and commit the result", file=sys.stderr)
            return 1
        print(f"vendored files match js/package-lock.json ({len(ours)} files)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
