"""Entity profiles: what a person reads about a paper, a person, an organization, an edition...

Each kind has a few SPARQL queries about one entity (`?e`), run on the read-only store of this
process (they are bounded by the entity: a LIMIT where a list could grow with the graph), and a
function that arranges their answers into panels: facts (label: values), tables and bars. IRIs
become names through the generation's index (index/), in the page's language; the raw
statements stay below the panels, folded, for whoever wants every triple with its provenance.

`PAGES` registers every kind of the ontology (iclr_kg.kinds) by name: a kind with a module
here, its `PAGE` (kindpage.KindPage: what its pages do that other kinds' do not); a kind
without, `PLAIN` (its statements). tests/web/test_kinds.py fails for a kind of the ontology
missing here, or a listed kind without a module of its own."""

from __future__ import annotations

from iclr_kg.kinds import LINK
from iclr_kg.web.kinds import award, conference, edition, organization, paper, person, source
from iclr_kg.web.kinds.kindpage import PLAIN, Download, KindPage, Profile
from iclr_kg.web.kinds.panels import Panel
from iclr_kg.web.kinds.rendering import render_panels

PAGES: dict[str, KindPage] = {
    "paper": paper.PAGE,
    "person": person.PAGE,
    "organization": organization.PAGE,
    "edition": edition.PAGE,
    "award": award.PAGE,
    "conference": conference.PAGE,
    "source": source.PAGE,
    # not listed: reached from the pages above, each shows its statements
    "authorship": PLAIN,
    "ordered": PLAIN,  # a value's place in a list a source gives, reified
    "conferral": PLAIN,
    "review": PLAIN,
    "role": PLAIN,
    LINK: PLAIN,  # a Wikidata link, reified
}


def plural(kind: str) -> str:
    """A kind's entities, many, as a heading, a tab or a count names them ("People"): its page's
    `plural`, the one place plurals live; Chinese has none, and translate() reads the ontology's
    label for it (论文) or i18n's word (人物)."""
    return PAGES[kind].plural if kind in PAGES and PAGES[kind].plural else kind.capitalize()


__all__ = ["PAGES", "PLAIN", "Download", "KindPage", "Panel", "Profile", "plural", "render_panels"]
