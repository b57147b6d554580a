"""Topic search: papers by what their titles, keywords and abstracts say, where an abbreviation
and its spelled-out form find each other ("GNN" and "graph neural network").

The entity index keeps each paper's title, keywords and abstract in an FTS5 table with the
Porter stemmer (so "networks" meets "network", "pruning" meets "pruned"). A query becomes an FTS5
expression here: every word must occur, and a phrase of SYNONYMS in the query may occur in any
of its group's forms. The table is small on purpose: abbreviations a reader of ICLR papers types
instead of the words, each checked to mean one thing in this field.
"""

from __future__ import annotations

import re

SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("gnn", "graph neural network"),
    ("gcn", "graph convolutional network"),
    ("rl", "reinforcement learning"),
    ("marl", "multi agent reinforcement learning"),
    ("llm", "large language model"),
    ("lm", "language model"),
    ("nlp", "natural language processing"),
    ("gan", "generative adversarial network"),
    ("vae", "variational autoencoder"),
    ("cnn", "convolutional neural network"),
    ("rnn", "recurrent neural network"),
    ("lstm", "long short term memory"),
    ("vit", "vision transformer"),
    ("nas", "neural architecture search"),
    ("sgd", "stochastic gradient descent"),
    ("mcmc", "markov chain monte carlo"),
    ("ode", "ordinary differential equation"),
    ("pde", "partial differential equation"),
    ("gp", "gaussian process"),
    ("ssl", "self supervised learning"),
    ("ood", "out of distribution"),
    ("vqa", "visual question answering"),
    ("nerf", "neural radiance field"),
    ("kd", "knowledge distillation"),
    ("pca", "principal component analysis"),
    ("diffusion model", "score based generative model", "denoising diffusion"),
)
MAX_WORDS = 12  # a topic is a few words; a pasted paragraph is cut here


def _key(words: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Words as the table is looked up: a plural's final "s" dropped ("gnns", "networks")."""
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


_GROUPS: dict[tuple[str, ...], tuple[str, ...]] = {_key(term.split()): group for group in SYNONYMS for term in group}
_LONGEST = max(len(key) for key in _GROUPS)


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def topic_expression(folded: str) -> str | None:
    """The FTS5 expression for a folded query (`index.fold`): its words in order, every one
    required, a phrase of SYNONYMS matched by any form of its group. None for no words."""
    words = re.findall(r"\w+", folded)[:MAX_WORDS]
    parts, i = [], 0
    while i < len(words):
        for length in range(min(_LONGEST, len(words) - i), 0, -1):
            group = _GROUPS.get(_key(words[i : i + length]))
            if group is not None:
                parts.append("(" + " OR ".join(_phrase(term) for term in group) + ")")
                i += length
                break
        else:
            parts.append(_phrase(words[i]))
            i += 1
    return " AND ".join(parts) or None
