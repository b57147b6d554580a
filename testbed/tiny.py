"""The tiny data/ the tests build most stores from (registries and one source), and the
benchmarks that want a store small enough to check every request against a reference."""

TINY_REGISTRIES = {
    "organizations.yaml": """
        organizations:
          - key: google
            name: Google
            kind: company
            labels: {zh-Hans: 谷歌}
          - key: google-research
            name: Google Research
            kind: research-lab
            parent: google
          - key: google-brain
            name: Google Brain
            kind: research-lab
            labels: {zh-Hant: 谷歌大腦}
            parent: google-research
          - key: stanford
            name: Stanford University
            kind: university
            aliases: [斯坦福]
        """,
    "people.yaml": """
        people:
          - {key: yang-song, name: Yang Song, native_name: {zh: 宋飏}}
          - {key: ben-poole, name: Ben Poole}
        """,
    "events.yaml": """
        conferences:
          - key: iclr
            name: International Conference on Learning Representations
            aliases: [ICLR]
        editions:
          - {key: iclr2021, conference: iclr, year: 2021, name: ICLR 2021}
        awards:
          - key: iclr2021-outstanding-paper
            name: ICLR 2021 Outstanding Paper Award
            kind: outstanding-paper
            edition: iclr2021
        """,
    "wikidata.yaml": """
        links:
          - entity: organization/google
            qid: Q95
            method: checked
            evidence: a test fixture
        """,
}

TINY_SOURCE = """
    source:
      key: tiny
      title: A tiny article
      language: zh-Hans
      seed: none.txt
      about: [ICLR 2021]
      summary: A fixture.
    editions:
      - edition: ICLR 2021
        submissions: 2997
        acceptance_rate: 0.29
    papers:
      - openreview: PxTIG12RRHS
        edition: ICLR 2021
        title: Score-Based Generative Modeling through Stochastic Differential Equations
        authors: [宋飏, Ben Poole]
        organizations: [斯坦福, 谷歌大腦]
        ratings: [8, 9]
        awards: [ICLR 2021 Outstanding Paper Award]
    """
