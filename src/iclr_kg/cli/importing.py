"""`iclr-kg import` and `link-wikidata`: OpenReview's venues and Wikidata's items brought in as
imports a curator reviews, and our entities linked to Wikidata."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from iclr_kg.config import Settings, flag_help
from iclr_kg.errors import (
    ImportFailed,
)
from iclr_kg.kinds import WIKIDATA_LINKED
from iclr_kg.progress import Progress

if TYPE_CHECKING:
    pass
from iclr_kg.cli.common import fails_cleanly, imports_option, main, store_option


@main.group("link-wikidata", invoke_without_command=True)
@store_option
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(WIKIDATA_LINKED),
    help="Which unlinked entities to reconcile (repeatable; default all).",
)
@click.option("--limit", type=int, help="Reconcile at most N entities.")
@click.option(
    "--min-score", type=float, default=0.7, show_default=True, help="Propose only candidates scoring this or more."
)
@click.option("--dry-run", is_flag=True, help="Print the proposals; write nothing.")
@click.option("--api", help=flag_help("wikidata_api", "Wikidata Action API URL."))
@click.option("--review", type=click.Path(path_type=Path), help="Review file [default: next to the store].")
@click.pass_context
@fails_cleanly
def link_wikidata(
    ctx: click.Context,
    store: Path | None,
    kinds: tuple[str, ...],
    limit: int | None,
    min_score: float,
    dry_run: bool,
    api: str | None,
    review: Path | None,
) -> None:
    """Propose Wikidata links for unlinked entities, with evidence, into a review file.

    `iclr-kg link-wikidata accept` then moves the proposals a curator keeps into data/wikidata.yaml.
    """
    ctx.obj = {"store": store, "review": review}
    if ctx.invoked_subcommand:
        return
    from iclr_kg.build.sources import load_dataset
    from iclr_kg.external.wikidata import WikidataClient, reconcile, write_proposals

    settings = Settings.from_env(store=store, wikidata_api=api)
    review_file = review or settings.store.parent / "wikidata-proposals.yaml"
    client = WikidataClient.for_settings(settings)
    dataset = load_dataset(settings.data_dir, settings.imports)

    def bar(items):
        listed = list(items)
        with Progress.for_terminal(settings).stage("reconcile", total=len(listed), unit="entities") as shown:
            yield from shown.track(listed, every=1)

    proposals = reconcile(dataset, client, kinds or WIKIDATA_LINKED, limit, min_score, progress=bar)
    for p in proposals:
        click.echo(f"{p.status:9} {p.entity} -> {p.qid} ({p.label}) score {p.score}: {'; '.join(p.evidence)}")
    if dry_run:
        click.echo(f"{len(proposals)} proposal(s); --dry-run: nothing written ({client.requests} API requests)")
        return
    write_proposals(proposals, review_file)
    click.echo(
        f"{len(proposals)} proposal(s) written to {review_file} ({client.requests} API requests); "
        f"review, then `iclr-kg link-wikidata accept`"
    )


@link_wikidata.command("accept")
@click.argument("entities", nargs=-1)
@click.pass_context
@fails_cleanly
def link_wikidata_accept(ctx: click.Context, entities: tuple[str, ...]) -> None:
    """Accept proposals (all unambiguous ones, or the ENTITIES named, e.g. person/yang-song)."""
    from iclr_kg.external.wikidata import accept

    settings = Settings.from_env(store=ctx.obj.get("store"))
    review_file = ctx.obj.get("review") or settings.store.parent / "wikidata-proposals.yaml"
    accepted = accept(review_file, settings.data_dir / "wikidata.yaml", list(entities) or None)
    for p in accepted:
        click.echo(f"accepted {p.entity} -> {p.qid}")
    click.echo(
        f"{len(accepted)} link(s) added to {settings.data_dir / 'wikidata.yaml'}; run `iclr-kg build` "
        "(and `iclr-kg import wikidata` for the identifiers their items state)"
    )


@main.group("import")
def import_group() -> None:
    """Import whole venues from outside services as sources of their own (see `build`)."""


@import_group.command("openreview")
@store_option
@click.option(
    "--venue",
    required=True,
    help="An ICLR year (2021), its OpenReview venue id (ICLR.cc/2021/Conference), or `all` for every supported year.",
)
@click.option("--reviews", is_flag=True, help="Also import each public review's rating and confidence.")
@click.option(
    "--limit", type=click.IntRange(min=1), help="Import at most N submissions (a partial import states no counts)."
)
@click.option(
    "--api",
    "api",
    type=click.Choice(["auto", "v1", "v2"]),
    default="auto",
    show_default=True,
    help="OpenReview API version; auto takes the year's (v1 up to 2023, v2 from 2024).",
)
@click.option("--base-url", help=flag_help("openreview_api", "API v1 base URL."))
@click.option("--base-url-v2", help=flag_help("openreview_api_v2", "API v2 base URL."))
@imports_option
@click.option("--refresh", is_flag=True, help="Drop this venue's cached pages and fetch everything again.")
@fails_cleanly
def import_openreview(
    store: Path | None,
    venue: str,
    reviews: bool,
    limit: int | None,
    api: str,
    base_url: str | None,
    base_url_v2: str | None,
    imports_dir: Path | None,
    refresh: bool,
) -> None:
    """Import a venue's submissions, decisions, authors and (--reviews) review scores from OpenReview.

    Pages are cached as they arrive: an interrupted import resumes where it stopped. The import
    folder is written only when complete and buildable; then run `iclr-kg build`. The years
    supported, and what each holds, are in docs/openreview.md ("Every ICLR edition").
    """
    from iclr_kg.external.openreview_import import run_all, run_import

    settings = Settings.from_env(
        store=store, openreview_api=base_url, openreview_api_v2=base_url_v2, imports_dir=imports_dir
    )
    if venue.strip().lower() == "all":
        if limit is not None or api != "auto":
            raise click.UsageError("--venue all takes neither --limit nor --api")
        results = run_all(
            settings, reviews=reviews, refresh=refresh, progress=lambda fmt: _fetch_bar(settings, f"ICLR {fmt.year}")
        )
        failed = 0
        for year in results:
            if year.result is not None:
                _report_import(year.result, hint=False)
            else:
                click.echo(
                    f"ICLR {year.fmt.year}: {'skipped' if year.skipped else 'FAILED'}: {year.skipped or year.failed}"
                )
                failed += year.failed is not None
        if failed:
            raise ImportFailed(f"{failed} year(s) failed; rerun to resume them (what was fetched is cached)")
        if any(year.result and year.result.changed for year in results):
            click.echo("run `iclr-kg build` to include them")
        return
    with _fetch_bar(settings, f"fetching {venue}") as progress:
        result = run_import(settings, venue, api=api, reviews=reviews, limit=limit, refresh=refresh, progress=progress)
    _report_import(result)


@import_group.command("wikidata")
@store_option
@click.option("--api", help=flag_help("wikidata_api", "Wikidata Action API URL."))
@imports_option
@fails_cleanly
def import_wikidata(store: Path | None, api: str | None, imports_dir: Path | None) -> None:
    """Import the identifiers (ORCID, dblp, ROR, arXiv, DOI, Semantic Scholar...) that Wikidata
    states for every entity data/wikidata.yaml links, as imports/wikidata-identifiers/.

    Answers are cached beside the store (as for `link-wikidata`): a rerun asks only what is new.
    Each identifier is checked by its scheme; one stated for two of our entities, or values that
    differ between sources, are reported by `iclr-kg build` for a curator."""
    from iclr_kg.external.wikidata import WikidataClient, import_identifiers

    settings = Settings.from_env(store=store, wikidata_api=api, imports_dir=imports_dir)
    client = WikidataClient.for_settings(settings)
    _report_import(import_identifiers(settings, client))


@contextlib.contextmanager
def _fetch_bar(settings: Settings, label: str) -> Iterator[Callable[[int, int], None]]:
    """Progress of one fetch: (done, total) as pages arrive (progress.py: a bar on a terminal)."""
    with Progress.for_terminal(settings).stage(label, unit="submissions") as shown:

        def progress(done: int, total: int) -> None:
            shown.total(max(total, done))
            shown.advance(done - shown.count)

        yield progress


def _report_import(result: Any, hint: bool = True) -> None:
    figures = ", ".join(f"{count} {name}" for name, count in result.stats.items())
    verdict = "written" if result.changed else "unchanged"
    click.echo(f"{result.folder}: {verdict} (API {result.api}, {result.requests} requests): {figures}")
    for warning in getattr(result, "warnings", []):
        click.echo(f"warning: {warning}", err=True)
    if result.changed and hint:
        click.echo("run `iclr-kg build` to include it")
