"""The Data page (/downloads): the graph as it is now, and every release `iclr-kg dump` wrote, with
its files' formats, sizes and checksums, served at the addresses the release's DCAT gives them."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import rdflib

from iclr_kg import vocab
from iclr_kg.release import write_release
from iclr_kg.web import create_app

DCAT = rdflib.Namespace("http://www.w3.org/ns/dcat#")


def test_the_data_page_lists_each_release_and_serves_its_files(real_store, real_settings, tmp_path: Path) -> None:
    releases = tmp_path / "releases"
    folder = write_release(real_store, releases, "9.9.8")
    client = create_app(real_settings.replace(releases_dir=releases)).test_client()
    page = client.get("/downloads").get_data(as_text=True)
    listed = dict(reversed(line.split("  ", 1)) for line in (folder / "SHA256SUMS").read_text().splitlines())
    assert "iclr-kg 9.9.8" in page and "N-Quads, gzip" in page and "Citation File Format" in page
    for name, digest in listed.items():
        assert f">{name}</a>" in page and digest in page, name
    size = (folder / "iclr-kg.nq.gz").stat().st_size
    assert f"{size:,}" in page
    # each file at the address the release's DCAT description gives it, the same bytes
    void = rdflib.Graph().parse(folder / "void.ttl")
    urls = sorted(str(u) for u in void.objects(None, DCAT.downloadURL))
    assert urls and all(u.startswith(vocab.BASE + "release/9.9.8/") for u in urls)
    for url in urls[:3] + [vocab.BASE + "release/9.9.8/SHA256SUMS"]:
        name = url.rsplit("9.9.8/", 1)[1]
        with client.get("/" + url.removeprefix(vocab.BASE)) as answer:  # a file: closed after
            assert answer.status_code == 200, url
            if name in listed:
                assert hashlib.sha256(answer.get_data()).hexdigest() == listed[name], name
    with client.get("/release/9.9.8/iclr-kg.nq.gz") as dump:
        assert dump.mimetype == "application/gzip" and "attachment" in dump.headers["Content-Disposition"]


def test_only_what_a_release_lists_is_served(real_store, real_settings, tmp_path: Path) -> None:
    releases = tmp_path / "releases"
    folder = write_release(real_store, releases, "9.9.7")
    (folder / "notes.txt").write_text("not part of the release")
    (releases / "secret.txt").write_text("beside the releases")
    client = create_app(real_settings.replace(releases_dir=releases)).test_client()
    for path in (
        "/release/9.9.7/notes.txt",  # in the folder, not in SHA256SUMS
        "/release/9.9.7/../secret.txt",
        "/release/9.9.7/%2e%2e/secret.txt",
        "/release/9.9.6/SHA256SUMS",  # no such release
        "/release/..%2f/secret.txt",
    ):
        assert client.get(path, follow_redirects=True).status_code == 404, path


def test_the_data_page_speaks_chinese_and_says_when_there_is_no_release(real_settings, tmp_path: Path) -> None:
    client = create_app(real_settings.replace(releases_dir=tmp_path / "none")).test_client()
    english = client.get("/downloads").get_data(as_text=True)
    assert "No release has been published here yet" in english
    assert "iclr-kg" not in english.split("<h2>Releases</h2>", 1)[1].split("<h2>", 1)[0]  # no operator's command
    chinese = client.get("/downloads?lang=zh").get_data(as_text=True)
    assert "此处尚未发布任何版本" in chinese and "如何引用" in chinese
    text = re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style|code|cite)\b.*?</\1>", " ", chinese))
    for english_words in ("Releases", "How to cite", "The graph now", "Downloads", "No release"):
        assert english_words not in text, english_words
