"""Real SPARQL engines on 127.0.0.1 for tests and benchmarks: Oxigraph's server (PyPI `oxigraph`),
Virtuoso Open Source 7 (Debian `virtuoso-opensource`), Apache Jena Fuseki (a `jena-fuseki-server`
jar from Maven Central, with Java 17). Each is started in a folder of its own on a free port and
stopped afterwards; one that is not installed raises `Unavailable` with the reason, which tests
turn into a skip. `.ci/run` installs them (scripts/install_engines.sh).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from testbed.helpers import free_port

ENGINES = ("oxigraph", "virtuoso", "fuseki")
FUSEKI_JAR = Path(__file__).resolve().parents[1] / "var" / "engines" / "fuseki-server.jar"


class Unavailable(Exception):
    """The engine cannot run here; the message says why and what would install it."""


@dataclass(frozen=True)
class Running:
    kind: str
    url: str  # the query endpoint, as `publish --to` and `--backend sparql+URL` take it
    auth: str | None  # what `publish --auth` needs to write
    sql_port: int | None = None  # Virtuoso's SQL port (isql: its bulk loader, grants)


def _wait(url: str, process: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(f"the engine exited at start ({process.returncode}): {log.read_text()[-800:]}")
        try:
            urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise Unavailable(f"the engine did not answer within {seconds:g} s: {log.read_text()[-800:]}")


@contextlib.contextmanager
def _process(command: list[str], folder: Path, url: str, seconds: float = 90) -> Iterator[None]:
    log = folder / "engine.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait(url, process, log, seconds)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def oxigraph(folder: Path) -> Iterator[Running]:
    binary = Path(sys.executable).with_name("oxigraph")
    if not binary.exists():
        raise Unavailable("Oxigraph's server is not installed (pip install oxigraph)")
    port = free_port()
    url = f"http://127.0.0.1:{port}/query"
    command = [str(binary), "serve", "--location", str(folder / "db"), "--bind", f"127.0.0.1:{port}"]
    with _process(command, folder, url):
        yield Running("oxigraph", url, None)


VIRTUOSO_INI = """\
[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
LockFile = {db}/virtuoso.lck
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
Striping = 0
TempStorage = TempDatabase
[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
Striping = 0
[Parameters]
ServerPort = {sql_port}
DisableUnixSocket = 1
CheckpointInterval = 60
CaseMode = 2
DirsAllowed = ., {db}
VADInstallDir = /usr/share/virtuoso-opensource-7/vad/
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
MaxQueryMem = 1G
; a publish MOVEs each graph in one transaction: its log must hold the largest (50 MB by default)
TransactionAfterImageLimit = 2000000000
[HTTPServer]
ServerPort = {http_port}
ServerRoot = /usr/share/virtuoso-opensource-7/vsp
ServerThreads = 10
MaxClientConnections = 10
EnabledGzipContent = 0
[SPARQL]
; Virtuoso cuts results at 10,000 rows by default, without a word: far more than any of our answers
ResultSetMaxRows = 10000000
MaxQueryExecutionTime = 0
MaxQueryCostEstimationTime = 0
"""


VIRTUOSO_SERVICE_GRANTS = (
    'GRANT SELECT ON DB.DBA.SPARQL_SINV_2 TO "SPARQL"; GRANT EXECUTE ON DB.DBA.SPARQL_SINV_IMP TO "SPARQL";'
)


@contextlib.contextmanager
def virtuoso(folder: Path, memory_gib: float = 1.0) -> Iterator[Running]:
    binary = shutil.which("virtuoso-t")
    if binary is None:
        raise Unavailable("Virtuoso is not installed (Debian: apt-get install virtuoso-opensource)")
    db = folder / "db"
    db.mkdir(parents=True, exist_ok=True)
    http_port, sql_port = free_port(), free_port()
    buffers = int(memory_gib * 2**30 * 0.66 / 8000)  # Virtuoso's own sizing rule: 8 KB pages, two thirds of RAM
    (folder / "virtuoso.ini").write_text(
        VIRTUOSO_INI.format(db=db, sql_port=sql_port, http_port=http_port, buffers=buffers, dirty=buffers * 3 // 4)
    )
    url = f"http://127.0.0.1:{http_port}/sparql"
    command = [binary, "+foreground", "+configfile", str(folder / "virtuoso.ini")]
    with _process(command, folder, url, seconds=120):
        # What an operator does once for federated queries: let anonymous SPARQL call SERVICE.
        isql = shutil.which("isql-vt") or shutil.which("isql")
        if isql is not None:
            subprocess.run(
                [isql, str(sql_port), "dba", "dba", f"exec={VIRTUOSO_SERVICE_GRANTS}"], capture_output=True, check=True
            )
        yield Running("virtuoso", url, "dba:dba", sql_port)  # dba:dba: Virtuoso's out-of-the-box administrator


FUSEKI_CONFIG = textwrap.dedent("""\
    PREFIX fuseki: <http://jena.apache.org/fuseki#>
    PREFIX tdb2:   <http://jena.apache.org/2016/tdb#>
    PREFIX rdf:    <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
    <#service> rdf:type fuseki:Service ; fuseki:name "ds" ;
        fuseki:endpoint [ fuseki:operation fuseki:query ; fuseki:name "query" ] ;
        fuseki:endpoint [ fuseki:operation fuseki:update ; fuseki:name "update" ] ;
        fuseki:endpoint [ fuseki:operation fuseki:gsp-rw ; fuseki:name "data" ] ;
        fuseki:dataset <#dataset> .
    <#dataset> rdf:type tdb2:DatasetTDB2 ; tdb2:location "{db}" .
    """)


@contextlib.contextmanager
def fuseki(folder: Path) -> Iterator[Running]:
    jar = Path(os.environ.get("ICLR_KG_FUSEKI_JAR", FUSEKI_JAR))
    if not jar.exists():
        why = FUSEKI_JAR.with_name("fuseki.unavailable")
        raise Unavailable(
            f"Fuseki is not installed ({why.read_text().strip() if why.exists() else 'scripts/install_engines.sh not run'}); "
            f"scripts/install_engines.sh puts its jar at {jar}"
        )
    java = shutil.which("java")
    if java is None:
        raise Unavailable("Fuseki needs Java 17 (Debian: apt-get install openjdk-17-jre-headless)")
    port = free_port()
    (folder / "config.ttl").write_text(FUSEKI_CONFIG.format(db=folder / "tdb2"))
    url = f"http://127.0.0.1:{port}/ds/query"
    command = [
        java,
        "-Xmx1g",
        "-jar",
        str(jar),
        "--port",
        str(port),
        "--localhost",
        "--config",
        str(folder / "config.ttl"),
    ]
    with _process(command, folder, url, seconds=120):
        yield Running("fuseki", url, None)


def start(kind: str, folder: Path) -> contextlib.AbstractContextManager[Running]:
    """The engine `kind` (one of ENGINES), started in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"oxigraph": oxigraph, "virtuoso": virtuoso, "fuseki": fuseki}[kind](folder)
