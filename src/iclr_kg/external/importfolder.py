"""The import folder: how any importer hands its facts to the build, whatever service they came from.

An import is a folder shaped like data/ under the imports directory (`Settings.imports`):
`sources/<key>.yaml` (the facts, with provenance: service, query, retrieval time) and
`events.yaml` for an edition no registry had. The people and organizations no registry had,
flagged `curation: needed`, live in one place for all imports, `shared/people.yaml` and
`shared/organizations.yaml`, each naming the imports that need it (`imported_by`): so a person
two years share is one entity, and each import builds alone or beside any others. An importer
builds these as the very models `build/sources.py` reads back (so a field the loader would refuse
cannot be written), then `write_import` writes them all or nothing: staged, read back beside
data/, resolved and turned into RDF, and only then moved into place. `iclr-kg build` reads every
import beside data/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from iclr_kg.atomic import write_text
from iclr_kg.build.resolve import build_registry
from iclr_kg.build.sources import (
    SHARED,
    Curated,
    Dataset,
    Edition,
    Organization,
    Person,
    Source,
    add_shared,
    load_folder,
)
from iclr_kg.build.validate import Violation


@dataclass
class ImportFolder:
    """One import: its source (facts with provenance), the new entities those facts needed, and
    the keys of the shared entities (made by earlier imports) it uses."""

    source: Source
    people: list[Person] = field(default_factory=list)
    organizations: list[Organization] = field(default_factory=list)
    editions: list[Edition] = field(default_factory=list)
    uses: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        """The folder's name, the source's key and the last part of its named graph."""
        return self.source.source.key

    def files(self) -> dict[str, dict[str, Any]]:
        """The import's own folder: relative path -> content, in the YAML shape data/ has."""
        files = {f"sources/{self.key}.yaml": _plain(self.source)}
        if self.editions:
            files["events.yaml"] = {"editions": [_plain(e) for e in self.editions]}
        return files

    def shared_after(self, shared: dict[str, list[Any]], curated: Dataset) -> dict[str, list[Any]]:
        """imports/shared/ once this import is written: it needs exactly what it uses and made
        (its earlier claims are dropped), and an entity no import needs any more, or one a curator
        has since put in data/, is pruned."""
        made: dict[str, list[Any]] = {"people": self.people, "organizations": self.organizations}
        out: dict[str, list[Any]] = {}
        for section in ("people", "organizations"):
            defined = {entity.key for entity in getattr(curated, section)}
            needed = self.uses | {entity.key for entity in made[section]}
            kept = []
            for entity in [*shared[section], *made[section]]:
                users = {u for u in entity.imported_by if u != self.key} | (
                    {self.key} if entity.key in needed else set()
                )
                if users and entity.key not in defined:
                    kept.append(entity.model_copy(update={"imported_by": sorted(users)}))
            out[section] = sorted(kept, key=lambda e: e.key)
        return out


@dataclass
class ImportResult:
    """What an import did, for the command's last lines: its folder, whether anything but the
    retrieval time changed, the API and requests it took, its figures, and what it left out."""

    folder: Path
    changed: bool
    api: str
    requests: int
    stats: dict[str, int]
    warnings: list[str] = field(default_factory=list)


def _plain(block: Curated) -> dict[str, Any]:
    """A block as a curator would write it: fields at their default left out."""
    return block.model_dump(mode="json", exclude_defaults=True)


def generated_yaml(content: dict[str, Any], header: str) -> str:
    """YAML with one line per list item (a JSON flow mapping: valid YAML, diffable, and much faster
    to write than block style: docs/performance.md, measured choices); other blocks in ordinary block style.
    `header` (comment lines) must start with `build.sources.GENERATED` for the loader to read the
    items as JSON, several times faster than YAML."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    parts = [header]
    for key, value in content.items():
        if isinstance(value, list):
            items = "".join(f"- {json.dumps(item, ensure_ascii=False)}\n" for item in value)
            parts.append(f"{key}:\n{items}" if items else f"{key}: []\n")
        else:
            parts.append(yaml.dump({key: value}, Dumper=dumper, allow_unicode=True, sort_keys=False, width=120))
    return "".join(parts)


def _without_retrieval(folder: Path) -> dict[str, str]:
    """The folder's files minus the retrieval time: what decides whether a rerun changed anything."""
    out = {}
    for path in sorted(folder.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        out[str(path.relative_to(folder))] = re.sub(r"(?m)^  retrieved: .*$", "", text)
    return out


def alone(folder: ImportFolder, curated: Dataset, shared: dict[str, list[Any]]) -> Dataset:
    """data/ with this import alone, and the shared entities it needs: what must build."""
    staged: dict[str, list[Any]] = {"editions": folder.editions, "sources": [folder.source]}
    return _beside_alone(curated, staged, folder.shared_after(shared, curated), folder.key)


def _beside_alone(curated: Dataset, staged: dict[str, list[Any]], shared: dict[str, list[Any]], key: str) -> Dataset:
    """data/ with one import's sections (`staged`) and the shared entities that import `key` needs."""
    from iclr_kg.build.sources import SECTIONS

    lists: dict[str, list[Any]] = {
        name: [*getattr(curated, name), *staged.get(name, [])] for name in [*SECTIONS, "sources"]
    }
    add_shared(lists, shared, {key})
    return Dataset(**lists, files=curated.files)


def shape_violations(
    folder: ImportFolder, curated: Dataset, shared: dict[str, list[Any]], ontology_dir: Path
) -> list[Violation]:
    """What the build's SHACL check would refuse once this import is in (beside data/), by the
    build's own validator: an importer keeps such records out. Read from the models themselves
    (writing and re-reading the YAML is `write_import`'s check)."""
    from iclr_kg.build import rdf, shaclsparql
    from iclr_kg.build.validate import load_shapes

    combined = alone(folder, curated, shared)
    asserted = list(rdf.asserted_quads(combined, build_registry(combined)))
    ontology = rdf.ontology_quads(ontology_dir / "iclr.ttl")
    return shaclsparql.validate(asserted, ontology, load_shapes(ontology_dir / "shapes.ttl")).violations


def _stage(files: dict[str, dict[str, Any]], staging: Path, header: str) -> None:
    for relative, content in files.items():
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated_yaml(content, header), encoding="utf-8")


def _shared_files(shared: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    return {
        f"{section if section == 'people' else 'organizations'}.yaml": {section: [_plain(e) for e in entities]}
        for section, entities in shared.items()
    }


def write_import(
    folder: ImportFolder, imports: Path, curated: Dataset, shared: dict[str, list[Any]], command: str
) -> tuple[Path, bool]:
    """Write `folder` under `imports`, and imports/shared/ with what it needs, atomically, after
    checking that it builds beside data/ (`curated`) alone; (its path, whether anything but the
    retrieval time changed). `shared`: imports/shared/ as it is now.

    The shared files are replaced first: an entity they gain names this import, and is left out of
    every build until the import's folder is in place, so a write killed between the two loses
    nothing and breaks nothing. `command` is what wrote it, named in each file's header so a
    curator knows how to redo it. Raises DataError (file, line, field) if the staged files do not
    load, resolve or convert. An importer checks the shapes first (`shape_violations`), so that a
    build never fails because of an import.
    """
    header = (
        f"# Written by `{command}`; rerun the import rather than editing here, or copy\n"
        "# entities into data/ to curate them (an entity in data/ wins: the import then matches it).\n"
    )
    imports.mkdir(parents=True, exist_ok=True)
    remove_stale(imports)
    final, common = imports / folder.key, imports / SHARED
    staging = imports / f".staging-{folder.key}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _stage(folder.files(), staging / "own", header)
        _stage(_shared_files(folder.shared_after(shared, curated)), staging / SHARED, header)
        _check_builds(curated, staging / "own", staging / SHARED, folder.key)
        same_own = final.is_dir() and _without_retrieval(final) == _without_retrieval(staging / "own")
        if same_own and _without_retrieval(common) == _without_retrieval(staging / SHARED):
            return final, False
        common.mkdir(exist_ok=True)
        for path in (staging / SHARED).iterdir():
            os.replace(path, common / path.name)
        previous = imports / f".previous-{folder.key}-{os.getpid()}"
        if final.exists():
            os.replace(final, previous)
        os.replace(staging / "own", final)
        shutil.rmtree(previous, ignore_errors=True)
        return final, True
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def tree_digest(*roots: Path) -> str:
    """SHA-256 over every file under `roots` (relative names and bytes, in order; a missing root
    counts as empty): what an import's output depends on besides what it fetched."""
    digest = hashlib.sha256()
    for root in roots:
        digest.update(str(root).encode() + b"\0")
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if path.is_file() and not path.name.startswith(".") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class WrittenFrom:
    """What an import folder was last written from (a digest of its inputs), kept beside the
    fetched pages: a rerun whose inputs and folder are unchanged skips resolving, checking and
    writing, which cost most of an import (`--venue all` then redoes only a year that changed)."""

    def __init__(self, cache: Path, inputs: str):
        self.path, self.inputs = cache / "written-from.json", inputs

    def unchanged(self) -> ImportResult | None:
        """The last result again, if it was written from these inputs and its folder is as written."""
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            folder = Path(record["folder"])
            if record["inputs"] != self.inputs or record["folder_digest"] != tree_digest(folder):
                return None
            return ImportResult(folder, False, record["api"], 0, record["stats"], record["warnings"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remember(self, result: ImportResult) -> None:
        record = {
            "inputs": self.inputs,
            "folder": str(result.folder),
            "folder_digest": tree_digest(result.folder),
            "api": result.api,
            "stats": result.stats,
            "warnings": result.warnings,
        }
        write_text(self.path, json.dumps(record))


def remove_stale(imports: Path) -> list[Path]:
    """Staging and previous folders left by imports that were killed (their process is gone)."""
    removed = []
    for folder in [*imports.glob(".staging-*"), *imports.glob(".previous-*")]:
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_builds(curated: Dataset, own: Path, shared: Path, key: str) -> None:
    """Read the staged files back beside data/ alone, resolve everything and make the import's RDF."""
    from iclr_kg.build import rdf

    staged = load_folder(own)
    registry = build_registry(_beside_alone(curated, staged, load_folder(shared), key))
    for source in staged["sources"]:
        rdf.source_quads(source, registry)
