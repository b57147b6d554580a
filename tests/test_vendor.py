"""The vendored JavaScript: what js/package.json pins, byte for byte as recorded, each with its licence."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "src" / "iclr_kg" / "web" / "static" / "vendor"


def test_vendored_files_are_the_pinned_versions_unchanged() -> None:
    pins = json.loads((ROOT / "js" / "package.json").read_text(encoding="utf-8"))["dependencies"]
    manifest = json.loads((VENDOR / "MANIFEST.json").read_text(encoding="utf-8"))
    assert set(manifest) == set(pins)
    for package, entry in manifest.items():
        assert entry["version"] == pins[package], f"{package}: run python scripts/vendor_js.py"
        assert "LICENSE" in entry["files"], f"{package} has no licence file"
        for name, digest in entry["files"].items():
            data = (VENDOR / package / name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == digest, f"{package}/{name} was edited; vendor it again"
    present = {str(p.relative_to(VENDOR)) for p in VENDOR.rglob("*") if p.is_file()} - {"MANIFEST.json"}
    recorded = {f"{package}/{name}" for package, entry in manifest.items() for name in entry["files"]}
    assert present == recorded


def test_no_page_loads_anything_from_another_site() -> None:
    templates = ROOT / "src" / "iclr_kg" / "web" / "templates"
    for template in templates.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert '<script src="http' not in text and '<link rel="stylesheet" href="http' not in text, template.name
