"""Settings in one place: defaults that work offline, ICLR_KG_* environment variables, flags.

Nothing here touches the disk at import time; paths are computed when asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import SettingsError

ENV_PREFIX = "ICLR_KG_"
# Settings with a fixed set of values.
CHOICES: dict[str, tuple[str, ...]] = {
    "reasoner": ("fast", "owlrl"),
    "validator": ("fast", "pyshacl"),
    "server": ("gunicorn", "waitress"),
}
BASE = "https://w3id.org/iclr-kg/"
ONTOLOGY_NS = BASE + "ontology#"
RESOURCE_BASE = BASE + "resource/"
GRAPH_BASE = BASE + "graph/"

GRAPH_ONTOLOGY = GRAPH_BASE + "ontology"
GRAPH_INFERRED = GRAPH_BASE + "inferred"
GRAPH_ENTITIES = GRAPH_BASE + "entities"
GRAPH_WIKIDATA = GRAPH_BASE + "wikidata"
GRAPH_UPDATES = GRAPH_BASE + "updates"  # what updates insert into the default graph
GRAPH_SOURCE_BASE = GRAPH_BASE + "source/"

PREFIXES: dict[str, str] = {
    "iclr": ONTOLOGY_NS,
    "res": RESOURCE_BASE,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
    "bibo": "http://purl.org/ontology/bibo/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
}
ENTITY_KINDS = (
    "paper",
    "person",
    "organization",
    "conference",
    "edition",
    "award",
    "conferral",
    "authorship",
    "review",
    "role",
    "source",
    "link",
)
# Exports and query results use one prefix per kind of entity (paper:PxTIG12RRHS), which reads
# better than res:paper\/PxTIG12RRHS; queries may use either.
EXPORT_PREFIXES: dict[str, str] = {
    **{k: v for k, v in PREFIXES.items() if k != "res"},
    **{kind: f"{RESOURCE_BASE}{kind}/" for kind in ENTITY_KINDS},
}
QUERY_PREFIXES: dict[str, str] = {**PREFIXES, **EXPORT_PREFIXES}


def resource_dir(name: str) -> Path:
    """Where `ontology`, `data` or `queries` lives: the checkout's top level, or inside a wheel."""
    package = Path(__file__).resolve().parent
    bundled = package / "_resources" / name
    if bundled.is_dir():
        return bundled
    return package.parent.parent / name


def default_store() -> Path:
    """`./var/store` under the current directory: writable on a fresh machine, easy to find."""
    return Path("var") / "store"


def _env(name: str) -> str | None:
    value = os.environ.get(ENV_PREFIX + name)
    return value if value not in (None, "") else None


@dataclass(frozen=True)
class Settings:
    """Every setting of the product. Flags override environment variables, which override defaults."""

    store: Path = field(default_factory=default_store)
    data_dir: Path = field(default_factory=lambda: resource_dir("data"))
    ontology_dir: Path = field(default_factory=lambda: resource_dir("ontology"))
    queries_dir: Path = field(default_factory=lambda: resource_dir("queries"))
    reasoner: str = "fast"
    validator: str = "fast"  # "fast" (SHACL compiled to SPARQL in Oxigraph) or "pyshacl" (the reference)
    query_timeout: float = 30.0
    request_timeout: float = 20.0  # seconds to receive a whole request (head and body) from its first byte
    query_workers: int = 4
    query_memory: int | None = (
        None  # MiB of address space per query worker; None: a twelfth of RAM (1-4 GiB); 0: no limit
    )
    result_cache: int = 64  # MiB per web process for small results of the current store; 0: off
    # SPARQL endpoints that SERVICE may call (comma-separated in ICLR_KG_SERVICES)
    services: tuple[str, ...] = ("https://query.wikidata.org/sparql", "https://query-scholarly.wikidata.org/sparql")
    update_token: str | None = None
    # Sources that LOAD on /update may fetch (comma-separated in ICLR_KG_LOAD_SOURCES); none by default
    load_sources: tuple[str, ...] = ()
    wikidata_api: str = "https://www.wikidata.org/w/api.php"
    imports_dir: Path | None = None  # where `import` writes and `build` reads imports; see `imports`
    openreview_api: str = "https://api.openreview.net"  # API v1 (venues up to 2023)
    openreview_api_v2: str = "https://api2.openreview.net"  # API v2 (ICLR 2024 on)
    openreview_pause: float = 1.0  # seconds between requests: OpenReview asks scripts to be gentle
    openreview_retries: int = 5  # on 429 and 5xx, with exponential backoff and Retry-After
    server: str = "gunicorn"  # or "waitress"
    host: str = "127.0.0.1"
    port: int = 8000

    @property
    def imports(self) -> Path:
        """Imported sources (one folder each, shaped like data/): by default `imports/` beside the store."""
        return self.imports_dir if self.imports_dir is not None else self.store.parent / "imports"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, then ICLR_KG_* variables, then the non-None `overrides` (the flags)."""
        settings = cls()
        env: dict[str, object] = {}
        for name, convert in (
            ("store", Path),
            ("data_dir", Path),
            ("ontology_dir", Path),
            ("queries_dir", Path),
            ("reasoner", str),
            ("validator", str),
            ("query_timeout", float),
            ("request_timeout", float),
            ("query_workers", int),
            ("query_memory", int),
            ("result_cache", int),
            ("update_token", str),
            ("host", str),
            ("port", int),
            ("wikidata_api", str),
            ("server", str),
            ("imports_dir", Path),
            ("openreview_api", str),
            ("openreview_api_v2", str),
            ("openreview_pause", float),
            ("openreview_retries", int),
        ):
            raw = _env(name.upper())
            if raw is not None:
                try:
                    env[name] = convert(raw)
                except ValueError:
                    kind = {int: "a whole number", float: "a number"}.get(convert, "a value")  # type: ignore[call-overload]
                    raise SettingsError(f"{ENV_PREFIX}{name.upper()}: {raw!r} is not {kind}") from None
        for name in ("services", "load_sources"):
            listed = _env(name.upper())
            if listed is not None:
                env[name] = tuple(s.strip() for s in listed.split(",") if s.strip())
        token_file = _env("UPDATE_TOKEN_FILE")
        if token_file and "update_token" not in env:
            try:
                env["update_token"] = Path(token_file).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise SettingsError(f"{ENV_PREFIX}UPDATE_TOKEN_FILE: cannot read {token_file}: {exc}") from None
        settings = replace(settings, **env)  # type: ignore[arg-type]
        flags = {k: v for k, v in overrides.items() if v is not None}
        return replace(settings, **flags).checked()  # type: ignore[arg-type]

    def checked(self) -> Settings:
        """Refuse values no command could use, when settings load, before any work is done."""
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise SettingsError(f"{ENV_PREFIX}{name.upper()}: {value!r} is not one of {', '.join(allowed)}")
        if not 0 < self.query_timeout < float("inf"):
            raise SettingsError(
                f"{ENV_PREFIX}QUERY_TIMEOUT: must be a positive number of seconds, not {self.query_timeout}"
            )
        if not 0 < self.request_timeout < float("inf"):
            raise SettingsError(
                f"{ENV_PREFIX}REQUEST_TIMEOUT: must be a positive number of seconds, not {self.request_timeout}"
            )
        for name in ("query_workers", "result_cache", "openreview_retries"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{ENV_PREFIX}{name.upper()}: must not be negative")
        if self.query_memory is not None and self.query_memory < 0:
            raise SettingsError(f"{ENV_PREFIX}QUERY_MEMORY: must not be negative (0: no limit)")
        if not 0 < self.port < 65536:
            raise SettingsError(f"{ENV_PREFIX}PORT: {self.port} is not a port number")
        return self
