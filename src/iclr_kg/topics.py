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

# Topics are indexed in English (titles, keywords and abstracts are); a Chinese reader's words
# for the field's common topics, in Simplified script (queries are folded to it: `index.fold`),
# become their English form, which SYNONYMS then widens. Longest first where one holds another.
CHINESE: dict[str, str] = {
    "图神经网络": "graph neural network",
    "图卷积网络": "graph convolutional network",
    "扩散模型": "diffusion model",
    "强化学习": "reinforcement learning",
    "多智能体强化学习": "multi agent reinforcement learning",
    "大语言模型": "large language model",
    "大模型": "large language model",
    "语言模型": "language model",
    "自然语言处理": "natural language processing",
    "生成对抗网络": "generative adversarial network",
    "变分自编码器": "variational autoencoder",
    "卷积神经网络": "convolutional neural network",
    "循环神经网络": "recurrent neural network",
    "视觉变换器": "vision transformer",
    "神经架构搜索": "neural architecture search",
    "知识蒸馏": "knowledge distillation",
    "自监督学习": "self supervised learning",
    "对比学习": "contrastive learning",
    "表征学习": "representation learning",
    "表示学习": "representation learning",
    "迁移学习": "transfer learning",
    "元学习": "meta learning",
    "联邦学习": "federated learning",
    "持续学习": "continual learning",
    "少样本学习": "few shot learning",
    "对抗样本": "adversarial examples",
    "对抗攻击": "adversarial attack",
    "鲁棒性": "robustness",
    "可解释性": "interpretability",
    "注意力机制": "attention",
    "优化": "optimization",
    "图像生成": "image generation",
    "神经辐射场": "neural radiance field",
    "分布外": "out of distribution",
    "高斯过程": "gaussian process",
    "因果推断": "causal inference",
    "隐私": "privacy",
    "剪枝": "pruning",
    "量化": "quantization",
}
_CHINESE_FIRST = sorted(CHINESE, key=len, reverse=True)
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")  # a Chinese character (index.fold reads it too)


def in_english(folded: str) -> str:
    """`folded` with the Chinese topic words of CHINESE put in English."""
    if not HAN.search(folded):
        return folded
    for chinese in _CHINESE_FIRST:
        if chinese in folded:
            folded = folded.replace(chinese, f" {CHINESE[chinese]} ")
    return folded


def untranslated(folded: str) -> bool:
    """Whether Chinese words are left that topic search cannot read (it says so, with examples)."""
    return bool(HAN.search(in_english(folded)))


def _key(words: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Words as the table is looked up: a plural's final "s" dropped ("gnns", "networks")."""
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


_GROUPS: dict[tuple[str, ...], tuple[str, ...]] = {_key(term.split()): group for group in SYNONYMS for term in group}
_LONGEST = max(len(key) for key in _GROUPS)


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def topic_expression(folded: str) -> str | None:
    """The FTS5 expression for a folded query (`index.fold`): its words in order, every one
    required, a phrase of SYNONYMS matched by any form of its group; Chinese topic words in
    English (CHINESE). None for no words."""
    words = re.findall(r"\w+", in_english(folded))[:MAX_WORDS]
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
