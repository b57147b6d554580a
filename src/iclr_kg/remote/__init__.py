"""Our graph on an existing SPARQL engine: publish a generation to it, serve from it.

- `engines`: what differs between Oxigraph's server, Fuseki, Virtuoso and any other SPARQL 1.1
  engine (where the update and Graph Store endpoints are, how results come back), found by asking.
- `client`: the SPARQL 1.1 Protocol and Graph Store Protocol over HTTP, streaming both ways.
- `store`: a read-only stand-in for pyoxigraph's `Store` that asks the engine, so the pages,
  the endpoint, saved queries and the index run unchanged on a remote backend.
- `publish`: `iclr-kg publish`: a generation's graphs into staging graphs, swapped in with
  `MOVE`, resumable and verified.
"""
