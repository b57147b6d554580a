"""Settings in one place: defaults that work offline, ICLR_KG_* environment variables, flags.

Nothing here touches the disk at import time; paths are computed when asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from iclr_kg.errors import SettingsError

ENV_PREFIX = "ICLR_KG_"
# The `backend` setting's prefix for a remote engine; a remote store's key starts with it too.
SCHEME = "sparql+"


def resource_dir(name: str) -> Path:
    """Where `ontology`, `data` or `queries` lives: the checkout's top level, or inside a wheel."""
    package = Path(__file__).resolve().parent
    bundled = package / "_resources" / name
    if bundled.is_dir():
        return bundled
    return package.parent.parent / name


def default_store() -> Path:
    """`./var/store` under the current directory: writable on a fresh machine, easy to find
    (absolute, as every path of the settings is: `_absolute`)."""
    return (Path("var") / "store").resolve()


WIKIDATA_SERVICES = (
    "https://query.wikidata.org/sparql",
    "https://query-scholarly.wikidata.org/sparql",
    "https://sparql.dblp.org/sparql",  # dblp's SPARQL service (QLever), for dblp-publications
)
PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Listed = Annotated[tuple[str, ...], NoDecode]  # comma-separated in the environment
Reasoner = Literal["fast", "owlrl"]  # reasoning/reason.REASONERS implements each
Validator = Literal["fast", "pyshacl"]  # build/pipeline.VALIDATORS implements each


class Settings(BaseSettings):
    """Every setting of the product, typed and described once. Flags override ICLR_KG_* variables,
    which override the defaults. docs/settings.md's table is `settings_table()` (a test keeps them
    in step), and the CLI's help for a setting's flag is `flag_help(name)`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="forbid")

    store: Path = Field(
        default_factory=default_store,
        json_schema_extra={"shown": "./var/store"},
        description="the store directory, relative to where you run the command",
    )
    data_dir: Path = Field(
        default_factory=lambda: resource_dir("data"),
        json_schema_extra={"shown": "data/"},
        description="the curated data (the checkout's `data/`)",
    )
    ontology_dir: Path = Field(
        default_factory=lambda: resource_dir("ontology"),
        json_schema_extra={"shown": "ontology/"},
        description="the ontology and shapes (`ontology/`)",
    )
    queries_dir: Path = Field(
        default_factory=lambda: resource_dir("queries"),
        json_schema_extra={"shown": "queries/"},
        description="the saved queries (`queries/`)",
    )
    reasoner: Reasoner = Field("fast", description="`fast` (ours) or `owlrl` (the reference; minutes on large data)")
    validator: Validator = Field(
        "fast",
        description="SHACL in builds: `fast` (shapes compiled to SPARQL, run by Oxigraph) or `pyshacl` (the reference)",
    )
    progress: bool = Field(True, description="bars for long work on a terminal; `0`: one line per stage, as in a log")
    query_timeout: PositiveSeconds = Field(
        30.0, description="seconds a query (or an update) may run; `timeout=` on a request may lower it"
    )
    request_timeout: PositiveSeconds = Field(
        20.0,
        description="seconds a client has to send a request's headers (from the connection's start; at most 60 "
        "under gunicorn) and its body (from the request's)",
    )
    query_workers: int = Field(
        4,
        ge=0,
        description="query worker processes per web process (SERVICE calls, lints; all queries under "
        "`--server waitress`), half of it a client's share; `0`: queries in-process, without a time limit",
    )
    client_queries: int = Field(
        5,
        ge=1,
        description="queries one client may have at once per web process: half of the query workers run, the rest "
        "wait for one of the client's own to end (up to 10 s, at most half their time limit); past either, 429 "
        "with `Retry-After`",
    )
    query_worker_idle: PositiveSeconds = Field(
        60.0,
        description="seconds a query worker may sit idle before it stops (one per web process stays; more start on demand)",
    )
    query_memory: int | None = Field(
        None,
        ge=0,
        description="MiB of address space per query worker (and writer); unset: a twelfth of RAM, 1024-4096; `0`: no limit",
    )
    result_cache: int = Field(
        64,
        ge=0,
        description="MiB per web process for small results of deterministic queries on the current store; `0`: off",
    )
    services: Listed = Field(WIKIDATA_SERVICES, description="comma-separated SPARQL endpoints that `SERVICE` may call")
    update_token: str | None = Field(None, description="the bearer token that enables `/update` and Graph Store writes")
    update_token_file: Path | None = Field(
        None, description="a file holding the update token (read when settings load)"
    )
    load_sources: Listed = Field((), description="comma-separated URLs that `LOAD` on `/update` may fetch")
    update_max_derived: int = Field(
        200_000,
        ge=0,
        description="triples one update may add to the inferred graph (an `owl:sameAs` can copy every triple of two entities); past it the update is refused (413), nothing written; and an update may not bring `owl:sameAs` into a graph that has none (413: after it every update recomputes the whole closure); `0`: neither bound",
    )
    wikidata_api: str = Field("https://www.wikidata.org/w/api.php", description="the Action API the reconciler asks")
    imports_dir: Path | None = Field(
        None, description="where `import` writes and `build` reads imported sources; unset: `imports/` beside the store"
    )
    releases_dir: Path | None = Field(
        None, description="where `dump` writes releases and /downloads lists them; unset: `releases/` beside the store"
    )
    openreview_api: str = Field("https://api.openreview.net", description="OpenReview's API v1 (ICLR up to 2023)")
    openreview_api_v2: str = Field("https://api2.openreview.net", description="OpenReview's API v2 (ICLR 2024 on)")
    openreview_pause: float = Field(
        1.0, ge=0, description="seconds between requests to OpenReview (it asks scripts to be gentle)"
    )
    openreview_retries: int = Field(
        5, ge=0, description="retries on 429 and 5xx, with exponential backoff and `Retry-After`"
    )
    backend: str = Field(
        "embedded",
        description="where the graph is read: `embedded` (the store) or `sparql+URL`, an engine `iclr-kg publish` sent it to",
    )
    backend_auth: str | None = Field(
        None, description="`user:password` (Basic, or Digest where asked) or `bearer:TOKEN` for that engine"
    )
    server: Literal["gunicorn", "waitress"] = Field(
        "gunicorn",
        description="the WSGI server of `serve`: `gunicorn` (several web processes, granian's HTTP in each) or `waitress`",
    )
    trusted_proxies: Listed = Field(
        (),
        description="comma-separated addresses or networks of reverse proxies whose `X-Forwarded-For` / `Forwarded` and `X-Forwarded-Proto` are believed (client address, https); none by default",
    )
    host: str = Field("127.0.0.1", description="the interface `serve` listens on")
    port: int = Field(8000, gt=0, lt=65536, description="the port `serve` listens on")

    @field_validator("services", "load_sources", "trusted_proxies", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator(
        "store", "data_dir", "ontology_dir", "queries_dir", "update_token_file", "imports_dir", "releases_dir"
    )
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        """Every path is made absolute here, once, against the directory the command runs in,
        and canonical (symbolic links followed): a relative `./var/store`, or a store reached
        through a link, then behaves exactly as the store's own path everywhere after (a
        generation's `current` link, which is read resolved; the writer's socket; a child process
        started elsewhere)."""
        if value is None:
            return None
        return value.expanduser().resolve()

    @field_validator("trusted_proxies")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import ipaddress

        for address in value:
            try:
                ipaddress.ip_network(address, strict=False)
            except ValueError:
                raise ValueError(f"{address!r} is not an IP address or network (10.0.0.0/8)") from None
        return value

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str) -> str:
        if value == "embedded" or value.startswith((f"{SCHEME}http://", f"{SCHEME}https://")):
            return value
        raise ValueError(f"{value!r} is neither `embedded` nor `{SCHEME}` and an http(s) URL")

    @property
    def remote(self) -> str | None:
        """The query URL of the remote engine the graph is read from; None: the embedded store."""
        return self.backend.removeprefix(SCHEME) if self.backend != "embedded" else None

    @model_validator(mode="after")
    def _credentials_out_of_the_backend_url(self) -> Settings:
        """`sparql+http://user:secret@host/…` works, but the URL is shown on /stats, in logs and in
        every engine error: its credentials move to `backend_auth` (unless that is set) and leave
        the URL, so nothing that prints the backend can print them."""
        if self.backend == "embedded":
            return self
        parts = urlsplit(self.backend.removeprefix(SCHEME))
        if parts.username is None and parts.password is None:
            return self
        netloc = parts.hostname or ""
        if ":" in netloc:  # an IPv6 address
            netloc = f"[{netloc}]"
        if parts.port is not None:
            netloc += f":{parts.port}"
        object.__setattr__(self, "backend", SCHEME + urlunsplit(parts._replace(netloc=netloc)))
        if self.backend_auth is None:
            user, password = unquote(parts.username or ""), unquote(parts.password or "")
            object.__setattr__(self, "backend_auth", f"{user}:{password}")
        return self

    @model_validator(mode="after")
    def _token_from_file(self) -> Settings:
        if self.update_token is None and self.update_token_file is not None:
            try:
                token = self.update_token_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(
                    f"{ENV_PREFIX}UPDATE_TOKEN_FILE: cannot read {self.update_token_file}: {exc}"
                ) from None
            object.__setattr__(self, "update_token", token)
        return self

    @property
    def imports(self) -> Path:
        """Imported sources (one folder each, shaped like data/): by default `imports/` beside the store."""
        return self.imports_dir if self.imports_dir is not None else self.store.parent / "imports"

    @property
    def releases(self) -> Path:
        """Versioned releases (`iclr-kg dump`): by default `releases/` beside the store."""
        return self.releases_dir if self.releases_dir is not None else self.store.parent / "releases"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, then ICLR_KG_* variables, then the non-None `overrides` (the flags); a value no
        command can use is a SettingsError naming the variable, before any work is done."""
        flags = {k: v for k, v in overrides.items() if v is not None}
        try:
            return cls(**flags)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise SettingsError(_one_line(exc)) from None

    def replace(self, **changes: object) -> Settings:
        """A copy with some settings changed (validated as when they load)."""
        return type(self).model_validate({**self.model_dump(), **changes})


def _one_line(error: ValidationError) -> str:
    """The first problem of a ValidationError, as `ICLR_KG_NAME: what is wrong`."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else "settings"
    variable = ENV_PREFIX + name.upper()
    value = problem.get("input")
    kind = problem["type"]
    if kind == "float_parsing":
        return f"{variable}: {value!r} is not a number"
    if kind == "int_parsing":
        return f"{variable}: {value!r} is not a whole number"
    if kind == "literal_error":
        allowed = ", ".join(repr(a).strip("'") for a in problem["ctx"]["expected"].replace("'", "").split(" or "))
        return f"{variable}: {value!r} is not one of {allowed}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "finite_number"):
        return f"{variable}: must be a positive number within range, not {value!r}"
    message = problem["msg"].removeprefix("Value error, ")
    return message if not problem["loc"] else f"{variable}: {message}"  # model checks name their variable


def _shown_defaults(field: Any) -> list[str]:
    """A setting's default as people read it: computed defaults say where they point."""
    if field.default_factory is not None:
        return [str((field.json_schema_extra or {}).get("shown", ""))]
    if field.default is None:
        return []
    return [str(d) for d in field.default] if isinstance(field.default, tuple) else [str(field.default)]


def flag_help(name: str, text: str | None = None) -> str:
    """A CLI flag's help for a setting: its description (or `text`), variable and default."""
    field = Settings.model_fields[name]
    shown = ", ".join(_shown_defaults(field))
    return f"{text or field.description} [env {ENV_PREFIX}{name.upper()}{f'; default {shown}' if shown else ''}]"


def settings_table() -> str:
    """docs/settings.md's table, made from the definition above."""
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        unset = "none" if isinstance(field.default, tuple) else "unset"
        default = ", ".join(f"`{d}`" for d in _shown_defaults(field)) or unset
        rows.append(f"| `{ENV_PREFIX}{name.upper()}` | {default} | {field.description} |")
    return "\n".join(rows)


if __name__ == "__main__":  # python -m iclr_kg.config: the table for docs/settings.md
    print(settings_table())
