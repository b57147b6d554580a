#!/usr/bin/env bash
# The SPARQL engines the remote-backend tests start on 127.0.0.1 (testbed/engines.py), installed
# from their own registries: Oxigraph's server comes with the test extras (PyPI `oxigraph`);
# Virtuoso Open Source 7 from Debian; Apache Jena Fuseki's jar from Maven Central (with Java 17).
# An engine that cannot be installed is skipped by the tests, with the reason written here to
# var/engines/<engine>.unavailable. Safe to run again: what is there is kept.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p var/engines
FUSEKI_VERSION=5.6.0  # the newest that runs on Java 17

if ! command -v virtuoso-t >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq virtuoso-opensource >/dev/null) \
            || echo "apt-get could not install virtuoso-opensource" > var/engines/virtuoso.unavailable
    else
        echo "no apt-get here: install Virtuoso Open Source 7 by hand" > var/engines/virtuoso.unavailable
    fi
fi
command -v virtuoso-t >/dev/null 2>&1 && rm -f var/engines/virtuoso.unavailable

if [ ! -f var/engines/fuseki-server.jar ]; then
    if ! command -v mvn >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven openjdk-17-jre-headless >/dev/null 2>&1 || true
    fi
    if command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
        if mvn -q -B dependency:copy -Dartifact="org.apache.jena:jena-fuseki-server:${FUSEKI_VERSION}" \
            -DoutputDirectory=var/engines -Dmdep.stripVersion=true > var/engines/fuseki-install.log 2>&1; then
            rm -f var/engines/fuseki.unavailable
        else
            why=$(grep -o "Unknown host [^ ]*" var/engines/fuseki-install.log | head -1)
            why=${why:-$(grep -o "Could not transfer[^:]*\|Connection refused" var/engines/fuseki-install.log | head -1)}
            echo "Maven could not fetch org.apache.jena:jena-fuseki-server:${FUSEKI_VERSION} (${why:-see var/engines/fuseki-install.log})" \
                > var/engines/fuseki.unavailable
        fi
    else
        echo "Fuseki needs Java 17 and Maven to fetch its jar (Debian: openjdk-17-jre-headless maven)" > var/engines/fuseki.unavailable
    fi
fi
for engine in virtuoso fuseki; do
    [ -f "var/engines/${engine}.unavailable" ] && echo "${engine}: $(cat "var/engines/${engine}.unavailable"); its tests will skip"
done
exit 0
