"""The interface in English and Chinese: the reader's language, and one table of the words pages use.

The language is `?lang=` (remembered in a cookie), else the browser's Accept-Language, else
English. Labels of entities come from the graph in that language (index/ keeps Chinese
names); the words around them come from `ZH` below, and the names of our terms (classes and
properties: "Decision", "Submissions") from the ontology's labels; a word in neither shows in English.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlencode

from flask import Flask, Response, g, request

from iclr_kg import terms
from iclr_kg.sparql import lint

LANGUAGES = ("en", "zh")
COOKIE = "lang"
LANGUAGE_FROM = ("Cookie", "Accept-Language")  # the request headers a page's language is read from

ZH = {
    # Words that look like one of our terms' labels but mean something else on a page (the ontology
    # names every term, in both languages: translate() reads its labels, and a test keeps this
    # table from translating a term again): a column of counts, a list's summary column.
    "papers": "论文数",
    "reviews": "评审数",
    "about": "简介",
    # navigation and frame
    "Query": "查询",
    "Saved queries": "保存的查询",
    "Browse": "浏览",
    "Ontology": "本体",
    "Stats": "统计",
    "SPARQL endpoint": "SPARQL 端点",
    "Search": "搜索",
    "Search papers, people, organizations…": "搜索论文、人物、机构……",
    "Skip to content": "跳到正文",
    "A knowledge graph of ICLR papers, people, organizations and awards, from {sources} sources.": (
        "ICLR 论文、人物、机构与奖项的知识图谱，来自 {sources} 个来源。"
    ),
    "A knowledge graph of ICLR papers, people, organizations and awards.": "ICLR 论文、人物、机构与奖项的知识图谱。",
    "all graphs (N-Quads)": "全部图（N-Quads）",
    "{triples} triples in {graphs} graphs": "{graphs} 个图共 {triples} 个三元组",
    "a graph's IRI shows on hover": "鼠标悬停可见图的 IRI",
    "the registries (people, organizations, editions, awards)": "登记表（人物、机构、届次、奖项）",
    "derived by reasoning": "推理所得",
    "the ontology": "本体",
    "links to Wikidata": "与 Wikidata 的链接",
    "written by updates": "更新写入",
    "{n} papers credit no organization in their sources.": "另有 {n} 篇论文在来源中未署任何机构。",
    "Papers credited to the organization or its units, as on its page and the front page; a unit counts again under its parent, “part of” the organization it is directly part of.": "计入机构及其下属单位署名的论文，与机构页和首页一致；下属单位的论文在其上级机构中再计一次，“隶属于”指其直接上级机构。",
    "Filtered": "筛选结果",
    # awards: the overview (/resource/award/), an award's sources, the rankings and what they count
    "ICLR paper awards": "ICLR 论文奖",
    "ICLR paper awards, {first}–{last}": "ICLR 论文奖（{first}–{last}）",
    "Every award of every edition, by kind: the papers any source names for it ({papers} award papers in all), and each source with how many papers it names; ICLR's own word is marked. Sources may disagree: each award's page gives each source's claim and notes.": (
        "每一届的每个奖项，按类别列出：任一来源列出的获奖论文（共 {papers} 篇获奖论文），以及每个来源列出的篇数；"
        "ICLR 官方的说法另有标注。来源之间可能不一致：各奖项页面逐一给出每个来源的说法与注释。"
    ),
    "Every award as a list": "以列表查看全部奖项",
    "Every award paper": "全部获奖论文",
    "Awards by edition": "各届奖项",
    "sources (papers each names)": "来源（各自列出的篇数）",
    "no paper award": "未颁发论文奖",
    "Where sources say no paper award was given": "来源称未颁发论文奖的届次",
    "its note": "其注释",
    "its notes": "其注释",
    "ICLR's own": "ICLR 官方",
    "Organizations with the most award papers, {first}–{last}": "获奖论文最多的机构（{first}–{last}）",
    "Counted: award papers credited to the organization or any of its sub-organizations, over every edition {first}–{last} ({papers} award papers).": (
        "计数口径：署名该机构或其任一下属机构的获奖论文，涵盖 {first}–{last} 每一届（共 {papers} 篇获奖论文）。"
    ),
    "{left} award papers name no organization in their sources and count for none.": (
        "另有 {left} 篇获奖论文在来源中未署任何机构，不计入任何机构。"
    ),
    "Organizations with the most papers, {first}–{last}": "论文最多的机构（{first}–{last}）",
    "Counted: papers in the graph credited to the organization or any of its sub-organizations, as on its page; sub-organizations count with their parent, not on their own.": (
        "计数口径：图谱中署名该机构或其任一下属机构的论文，与机构页一致；下属机构计入其上级机构，不单独排名。"
    ),
    "What each source states": "各来源的说法",
    "Sources naming fewer papers than all sources together, with their notes": "列出的获奖论文少于全部来源合计的来源，及其注释",
    "Some name only their own paper or the first recipient; some count otherwise (each note is the curator's reading of the source).": (
        "有的只列出自己的论文或首位获奖者；有的计数方式不同（每条注释是整理者对该来源的解读）。"
    ),
    "papers it names": "列出的论文数",
    "A source may name only some of the papers (its own, the first recipient); its notes say how it counts.": (
        "一个来源可能只列出部分论文（如其自己的论文、首位获奖者）；其注释说明它如何计数。"
    ),
    "{papers} papers, named by {sources} sources": "{papers} 篇论文，由 {sources} 个来源列出",
    "no paper award, sources say": "来源称未颁发论文奖",
    "Every award, with its sources": "全部奖项及其来源",
    "the page gives no date": "页面未给出日期",
    "Whose word": "谁的说法",
    "ICLR's own (the organizer's statement)": "ICLR 官方（主办方声明）",
    "secondary (not the organizer's word)": "二手来源（非主办方说法）",
    "Topics are indexed in English (titles, keywords and abstracts); try, for example:": "主题按英文索引（标题、关键词与摘要），可试试：",
    "every graph, with its name": "全部命名图（带图名）",
    "the whole graph, merged": "合并后的整个图",
    "OpenAPI description": "OpenAPI 描述",
    # query page, saved queries, stats
    "Query the ICLR knowledge graph": "查询 ICLR 知识图谱",
    "SPARQL query (prefixes iclr:, schema:, paper:, person:, organization:, … are predeclared)": (
        "SPARQL 查询（iclr:、schema:、paper:、person:、organization: 等前缀已预先声明）"
    ),
    "leave out inferred triples (the inferred graph)": "不含推理所得的三元组（推理图）",
    "Run": "运行",
    "Statistics": "统计",
    "Store generation": "存储版本",
    "published to": "已发布到",
    "Triples per graph": "各图的三元组数",
    "Entities per class (inferred included)": "各类的实体数（含推理）",
    # search, lists, errors
    "Names, titles, aliases, Chinese names, topics": "名称、标题、别名、中文名、主题",
    "papers by topic": "按主题的论文",
    "Papers on this topic": "该主题的论文",
    "{n} of them are listed above, matched by name.": "其中 {n} 篇已在上方按名称列出。",
    "One of them is listed above, matched by name.": "其中 1 篇已在上方按名称列出。",
    "in titles, keywords and abstracts": "见于标题、关键词与摘要",
    "matches for": "条结果：",
    "Every": "全部",
    "Sort by": "排序",
    "Page": "第",
    "of": "页，共",
    "previous": "上一页",
    "{first}–{last} of {total} matching “{q}”": "与“{q}”匹配的共 {total} 条，此处为第 {first}–{last} 条",
    "next": "下一页",
    # a page's 400s (RequestError.worded): the request's own words stay as they were sent
    "presentation, award and topic narrow lists of papers only": "presentation、award 和 topic 只能用于筛选论文列表",
    "conference narrows lists of editions and awards only": "conference 只能用于筛选届次与奖项列表",
    "conference={asked}: no such conference (iclr, ...)": "conference={asked}：没有这一会议（可用 iclr 等）",
    "year={asked}: a year is four digits (2021)": "year={asked}：年份为四位数字（如 2021）",
    "edition={asked}: no such edition (iclr2021, iclr2024, ...)": "edition={asked}：没有这一届（可用 iclr2021、iclr2024 等）",
    "{argument}={asked}: one of {values}": "{argument}={asked}：应为以下之一：{values}",
    "award={asked}: yes (any award) or one of {values}": "award={asked}：应为 yes（任一奖项）或以下之一：{values}",
    "topic={asked}: a topic is a few words (graph neural network)": "topic={asked}：主题为几个词（如 graph neural network）",
    "parameter {name}: no {kind} is called {value}; pick one from the list": "参数 {name}：没有名为 {value} 的条目；请从列表中选择",
    "Perhaps you meant": "您是否要找",
    "No entity {iri} in this graph.": "图中没有实体 {iri}。",
    "No such entity: {path}": "没有这个实体：{path}",
    "No entity here is known by the {scheme} identifier {value}.": "图中没有以 {scheme} 标识符 {value} 标识的实体。",
    "Search the graph with the box above, or": "请用上方的搜索框查找，或",
    "browse every paper": "浏览全部论文",
    ".": "。",
    "Every statement, with where it is stated": "全部陈述及其出处",
    "Referenced by": "被引用于",
    "inferred": "推理所得",
    "et al.": "等",
    "Download:": "下载：",
    "Open in the query page": "在查询页面打开",
    "(with these parameters)": "（带这些参数）",
    # a saved query's parameter, by the kind of value it takes (PARAMETER_KINDS)
    "{name} ({kind})": "{name}（{kind}）",
    "iri: a name, an IRI or a prefixed name": "IRI：名称、IRI 或带前缀的名称",
    "integer": "整数",
    "string": "文本",
    "search": "搜索",
    "The best {shown} matches for “{q}”; narrow them by kind above.": "“{q}”的前 {shown} 个最佳结果；可按上方类别缩小范围。",
    "The best {shown} matches for “{q}”.": "“{q}”的前 {shown} 个最佳结果。",
    "Copy link": "复制链接",
    "Copied": "已复制",
    "{n} more values: every one is in the Turtle form": "另有 {n} 个值：全部见 Turtle 格式",
    "ICLR papers, people, organizations and awards": "ICLR 的论文、人物、机构与奖项",
    "An ORCID iD, a dblp or Wikidata URL, or an OpenReview id goes straight to its entity.": "粘贴 ORCID、dblp 或 Wikidata 链接、OpenReview 编号，可直接打开对应实体。",
    "Inside": "收录内容",
    "No saved query called {name}: /queries lists them.": "没有名为 {name} 的保存查询：/queries 列出了全部保存查询。",
    "{city}, {country}": "{country}{city}",
    "Editions of ICLR": "ICLR 各届",
    "Awards given at ICLR": "ICLR 颁发的奖项",
    "Also held, as context for the people and papers that name them: {names}.": "另收录（作为相关人物与论文提及的背景）：{names}。",
    "{n} papers": "{n} 篇论文",
    "Every award": "全部奖项",
    "Organizations with the most papers": "论文最多的机构",
    "Ask your own question": "自己提问",
    "The query page": "查询页面",
    "(SPARQL, with completion and charts)": "（SPARQL，带补全与图表）",
    "Why papers won": "论文为何获奖",
    "At a glance": "概览",
    "page {page} of {pages}": "第 {page} 页，共 {pages} 页",
    "{n} award papers, its sub-organizations' included": "获奖论文 {n} 篇（含下属机构）",
    "{accepted} of {decided} with a decision ({percent})": "有评审决定的 {decided} 篇中接收 {accepted} 篇（{percent}）",
    "Organizations on their papers": "其论文署名的机构",
    "Closest co-authors": "最常合作者",
    "This as a query": "以查询打开",
    "stated by sources": "来源所述",
    "counted in the graph": "图中计数",
    "The graph holds {shown} of the {total} submissions its sources count: those the sources name, and any OpenReview import.": "来源统计的 {total} 篇投稿中，图中收录 {shown} 篇：即来源提到的论文，以及 OpenReview 导入的论文。",
    "Previous edition": "上一届",
    "Next edition": "下一届",
    "all": "全部",
    "Data as of": "数据截至",
    "data as of": "数据截至",
    "its sources": "其来源",
    "Licence": "许可",
    "Cite as": "引用",
    "Identifiers elsewhere": "外部标识符",
    "kind": "类别",
    "identifier": "标识符",
    "count": "数量",
    "as": "格式：",
    "Chinese": "中文",
    "English": "英文",
    "Simplified Chinese": "简体",
    "not stated in the article": "文章未注明",
    "not stated in the article (we keep a copy of its text)": "文章未注明（本项目保存了原文）",
    "Published": "发表日期",
    "Traditional Chinese": "繁体",
    "in the original English": "英文原文",
    "{shown} of {total} shown": "显示 {shown} 条，共 {total} 条",
    "First {limit} shown.": "仅显示前 {limit} 条。",
    # the ontology page
    "The iclr-kg ontology": "iclr-kg 本体",
    "Namespace": "命名空间",
    "prefix": "前缀",
    "Classes": "类",
    "Object properties": "对象属性",
    "Datatype properties": "数据属性",
    "Individuals": "个体",
    "subclass of": "子类于",
    "subproperty of": "子属性于",
    "inverse of": "逆属性",
    "domain": "定义域",
    "range": "值域",
    "type": "类型",
    "property": "属性",
    "value": "值",
    "entities": "实体登记",
    "yes": "是",
    "no": "否",
    "part of": "隶属于",
    "(sources differ)": "（来源不一）",
    # kinds
    "edition": "届次",
    "conference": "会议",
    "conferral": "授奖",
    # panels
    "Authors": "作者",
    "Co-authors": "合作者",
    "Positions and education": "任职与教育",
    "Papers per year (sub-organizations included)": "每年论文数（含下属机构）",
    "Award papers": "获奖论文",
    "Edition": "届次",
    "Figures by source": "各来源的数字",
    "Decisions (all submissions in the graph)": "录用结果（图中全部投稿）",
    "Top-rated papers (public reviews)": "评分最高的论文（公开评审）",
    "People honoured": "获奖者",
    "Conference": "会议",
    "What it states (entities per kind)": "所述内容（各类实体数）",
    # facts and columns
    "according to {source}": "据{source}",
    "“{title}”": "《{title}》",
    " ({note})": "（{note}）",
    "Organizations on their papers: the years and the papers that credit each one itself; a unit counts apart from the organization it is part of.": (
        "其论文署名的机构：年份与直接署名该机构本身的论文数；下属机构与其上级机构分开计数。"
    ),
    "Also titled": "其他标题",
    "Method": "方法",
    "Note": "备注",
    "Sources the note names": "备注提到的来源",
    "Code": "代码",
    "needs a column of numbers beside another column": "需要一列数字和另一列",
    "needs years, dates or numbers along its axis": "横轴需要年份、日期或数字",
    "needs two columns of entities (from, to)": "需要两列实体（起点、终点）",
    "needs a column of dates or years": "需要一列日期或年份",
    "no rows to draw": "没有可绘制的结果",
    "Each runs at {path} with the same content negotiation as {sparql} (add {formats}); parameters go in the URL.": "每个查询都在 {path} 运行，内容协商与 {sparql} 相同（可加 {formats}）；参数写在网址里。",
    "Parameters": "参数",
    "No rows for these parameters: the imports in this graph state no such reviews.": "这些参数下没有结果：本图谱中的导入数据没有此类评审。",
    "No rows: this query reads what OpenReview publishes (each submission's public reviews, its authors' profiles), and this graph holds none of it yet.": "没有结果：此查询读取 OpenReview 公开的数据（每篇投稿的公开评审、作者档案），而本图谱尚无此类数据。",
    "Rows come from the OpenReview data this graph holds.": "结果来自本图谱收录的 OpenReview 数据。",
    "PhD student": "博士生",
    "PhD": "博士",
    "PhD graduate": "博士毕业",
    "computer science PhD": "计算机科学博士",
    "master": "硕士",
    "master's student in computer science": "计算机科学硕士生",
    "undergraduate": "本科生",
    "bachelor": "学士",
    "assistant professor": "助理教授",
    "professor": "教授",
    "former student": "前学生",
    "director of AI": "人工智能总监",
    "machine learning research scientist": "机器学习研究科学家",
    "senior scientist": "高级科学家",
    "Downloads": "下载",
    "The graph is published under": "本图谱的发布许可为",
    "The graph now": "当前图谱",
    "streamed from the store as it is; gzip-compressed when your client accepts it": "从存储实时流式导出；客户端支持时以 gzip 压缩",
    "Releases": "版本发布",
    "bytes": "字节",
    "file": "文件",
    "format": "格式",
    "N-Quads, gzip": "N-Quads（gzip 压缩）",
    "Turtle": "Turtle",
    "Citation File Format": "引用文件格式（CFF）",
    "SHA-256 sums": "SHA-256 校验和",
    "text": "文本",
    "Check a download with": "校验下载文件：",
    "cite it with its": "引用时请用其",
    "No release has been published here yet: the graph now, above, is the whole of it.": "此处尚未发布任何版本：上方的当前图谱即为全部数据。",
    "How to cite": "如何引用",
    "{n} ratings, average {average}": "{n} 个评分，平均 {average}",
    "Average rating as reported": "所报道的平均评分",
    "review {n}": "评审 {n}",
    "People": "人物",
    "Conferences": "会议",
    "relevance": "相关度",
    ", ": "、",
    "sort={asked}: this list of {kind} entities is sorted by {sorts}": "sort={asked}：此列表只能按以下方式排序：{sorts}",
    "of ICLR {year}": "ICLR {year}",
    "with an award": "获奖",
    "with the {award}": "获{award}",
    "by {name}": "作者 {name}",
    "with {name}": "合作者 {name}",
    "credited to {name}": "署名机构 {name}",
    "at {name}": "会议 {name}",
    "on “{name}”": "主题“{name}”",
    "confidence {n}": "置信度 {n}",
    "Also known as": "别名",
    "Honours": "荣誉",
    "Student of": "师从",
    "Part of": "隶属于",
    "Sub-organizations": "下属机构",
    "Place": "地点",
    "Dates": "日期",
    "Rating scale": "评分标准",
    "Inaugural": "首届",
    "Criteria": "评选标准",
    "Committee": "评审委员会",
    "Founded": "创办于",
    "Uses OpenReview": "使用 OpenReview",
    "Editions": "各届",
    "Written by": "作者",
    "Language": "语言",
    "Retrieved": "获取时间",
    "author": "作者",
    "as written": "原文写法",
    "the committee's reason": "评审委员会的理由",
    "Acceptance rate over the years": "历年接收率",
    # figures over the years (web/trends.py, the conference page, the front page)
    "submissions, stated": "投稿数（来源所述）",
    "accepted, stated": "接收数（来源所述）",
    "papers held in the graph": "图中收录的论文",
    "accepted, counted": "接收数（图中计数）",
    "orals, stated": "口头报告（来源所述）",
    "spotlights, stated": "焦点报告（来源所述）",
    "posters, stated": "海报（来源所述）",
    "orals, counted": "口头报告（图中计数）",
    "spotlights, counted": "焦点报告（图中计数）",
    "posters, counted": "海报（图中计数）",
    "Counted only where the graph holds every submission with its decision: {whole} of {editions} editions. A vertical stroke spans figures that sources differ on.": "仅当图中收录某届的全部投稿及其录用结果时才给出计数：共 {editions} 届，其中 {whole} 届。竖线表示来源之间不一致的数字范围。",
    "Submissions and accepted papers": "投稿数与接收数",
    "Orals, spotlights and posters": "口头报告、焦点报告与海报",
    "Dashed: the papers the graph holds, every edition; the accepted papers it counts, only where it holds the edition whole ({whole} of {editions} editions).": "虚线：图中收录的论文数（每一届）；图中计数的接收论文数，仅限图中收录整届的届次（{editions} 届中的 {whole} 届）。",
    "Dashed: counted in the graph, only where it holds the edition whole ({whole} of {editions} editions).": "虚线：图中计数，仅限图中收录整届的届次（{editions} 届中的 {whole} 届）。",
    "Figures per edition": "各届数字",
    "held in the graph": "图中收录",
    "rate counted in the graph": "图中计数的接收率",
    "acceptance rate among the papers held": "已收录论文中的接收率",
    "share": "占比",
    "{} (lowest stated)": "{}（来源所述最低）",
    "{} (highest stated)": "{}（来源所述最高）",
    "Stated figures are each source's (a range where they differ; the edition's page names each source). A counted rate is shown only where the graph holds every submission with its decision.": "所述数字来自各来源（不一致时给出范围；届次页面列出每个来源）。仅当图中收录全部投稿及其录用结果时才显示计数得到的接收率。",
    "{held} papers; no source gives a total": "{held} 篇论文；没有来源给出总数",
    "the graph holds all {total} submissions": "图中收录全部 {total} 篇投稿",
    "the graph holds {held} of {total} submissions": "图中收录 {total} 篇投稿中的 {held} 篇",
    "among the papers held, not the edition's": "仅为图中收录的论文，并非该届数字",
    "Ratings per year (reviews held)": "逐年评审分数（图中收录的评审）",
    "Each rating's share of the year's reviews held in the graph; scales differ between years.": "各分数占当年图中收录评审的比例；各年量表不同。",
    "Every edition's figures: submissions, accepted papers, tiers, ratings": "历届数字：投稿、接收、展示等级、评分",
    "The {n} closest co-authors, lines as thick as their papers together.": "合作最多的 {n} 位合作者，连线粗细表示合著论文数。",
    "Every co-author, in the query page": "在查询页查看全部合作者",
    "percent": "百分比",
    "by": "作者",
    "with": "合作者",
    "credited to": "署名机构",
    "held at": "会议",
    "on the topic": "主题为",
    "Every one as a list, to narrow by year, decision, presentation or award": "以列表查看全部，可按年份、评审决定、展示形式或获奖筛选",
    "presentation": "展示形式",
    "award papers": "获奖论文",
    "remove": "移除",
    "every one, by year and decision": "全部，可按年份与录用结果筛选",
    "co-author": "合作者",
    "papers together": "合作论文数",
    "now": "现任",
    "credited as": "署名为",
    "figure": "数字",
    "figures it states": "所述数字",
    "topic": "主题",
    "GNN, diffusion models…": "英文词，如 GNN、diffusion",
    "narrow": "筛选",
    "Sources differ": "来源不一致",
    "Co-author graph": "合作者关系图",
    "Review ratings": "评审评分",
    "Papers per year": "每年论文数",
    "Examples": "示例",
    "Recent queries": "最近的查询",
    "Predeclared prefixes": "预先声明的前缀",
    "Share": "分享",
    "Permalink": "永久链接",
    "Close": "关闭",
    "View": "视图",
    "Filter rows": "筛选行",
    "table": "表格",
    "bar": "柱状图",
    "line": "折线图",
    "graph": "关系图",
    "tree": "树",
    "timeline": "时间线",
    "page": "查询页",  # a saved query's own page, after its description on /query
    "x axis": "横轴",
    "y axis": "纵轴",
    "series": "系列",
    "none": "无",
    "(none yet)": "（尚无）",
    # the query lint's messages (sparql/lint.py's templates) and where they are
    "Line {line}, column {column}: {message}": "第 {line} 行第 {column} 列：{message}",
    lint.NOT_DECLARED: "前缀 {prefix}: 未声明；请声明它（PREFIX {prefix}: <…>），或使用每个查询都有的前缀之一：{listed}",
    lint.NOT_IN_ONTOLOGY: "iclr:{local} 不在 iclr-kg 本体中，因此匹配不到任何内容{hint}",
    lint.DID_YOU_MEAN: "；你是不是想写 iclr:{nearest}？",
    lint.NEVER_BOTH: (
        "?{variable} 既被当作 iclr:{first}（{why}）又被当作 iclr:{cls}（{use}）：没有实体同时属于这两个类，"
        "因此这个模式匹配不到任何内容{hint}"
    ),
    lint.SUBJECT_OF: "iclr:{prop} 的主语",
    lint.VALUE_OF: "iclr:{prop} 的值",
    lint.TRY_PATH: "；要取{whose}的{what}，请写 iclr:{step}/iclr:{prop}",
    lint.MISTYPED: (
        "{what} 是 xsd:{datatype}（iclr:{prop} 的值域），而 {literal} 是 xsd:{written}：SPARQL 认为不同类型的值"
        "既不相等也无大小之分，因此这里一行也不会保留；请写成 xsd:{datatype}，例如 {example}"
    ),
    lint.A_VALUE_OF_TYPE: "一个 xsd:{datatype} 类型的值",
    lint.SYNTAX: "SPARQL 语法错误，位于第 {line} 行第 {column} 列：{detail}",
    lint.NEVER_CLOSED: "查询没写完就结束了：第 {at_line} 行第 {at_column} 列的 {opened} 始终没有闭合（缺少 {closer}）",
    lint.NOT_CLOSED_BEFORE: "第 {at_line} 行第 {at_column} 列的 '{{' 在第 {line} 行（{start}）之前没有闭合：缺少一个 '}}'",
    lint.PREFIX_HERE: "这里有一个前缀未声明",
    lint.UNEXPECTED: "这里出现了意外的 {near}",
    lint.ENDS_TOO_EARLY: "查询结束得太早（有未闭合的部分）",
    lint.PARSER_FOUND: "解析器英文原文：{detail}；此处为 {found}",
    lint.PARSER: "解析器英文原文：{detail}",
}


def language() -> str:
    """The reader's language for this request, chosen the first time a page asks (an API
    request never does) and kept on `g`."""
    chosen = g.get("lang")
    if chosen is None:
        chosen = g.lang = _choose()
    return chosen


def _choose() -> str:
    """`?lang=`, else the cookie, else Accept-Language, else English (the module docstring)."""
    asked = request.args.get("lang", "") or request.cookies.get(COOKIE, "")
    if asked in LANGUAGES:
        return asked
    best = request.accept_languages.best_match(["en", "zh", "zh-CN", "zh-Hans", "zh-TW", "zh-Hant"])
    return "zh" if best and best.startswith("zh") else "en"


def translate(text: str, lang: str | None = None) -> str:
    """`text` in the reader's language: the page's own words from ZH, a term's name from the
    ontology's label (`Decision` is iclr:decision's "评审决定"), else English."""
    if (lang or language()) != "zh":
        return text
    found = ZH.get(text)
    return found if found is not None else _term_word(text)


@functools.lru_cache(maxsize=4096)
def _term_word(text: str) -> str:
    """`text` as the ontology labels it in Chinese, where it is one of our terms' English labels."""
    return terms.packaged().word(text, "zh") or text


def problem_shown(problem: lint.Problem, lang: str | None = None) -> dict[str, object]:
    """A lint problem as the editor and the query page show it, in the reader's language: its
    `message`, and `shown`, the message with where it is (unless the message says so itself)."""
    chosen = lang or language()
    message = problem.said_in(lambda words: translate(words, chosen))
    if lint.SAID_AT.search(problem.message):
        shown = message
    else:
        shown = translate("Line {line}, column {column}: {message}", chosen).format(
            line=problem.line, column=problem.column, message=message
        )
    return {**problem.as_json(), "message": message, "shown": shown}


# What a saved query's parameter takes, by its declared kind (`# param: edition iri ...`)
PARAMETER_KINDS = {"iri": "iri: a name, an IRI or a prefixed name", "integer": "integer", "string": "string"}


# A result column's words where its variable's are short for more ("rateHigh": the highest rate
# sources state), and the words a stated figure's lowest and highest take
COLUMN_WORDS = {
    "rate": "acceptance rate",
    "counted rate": "rate counted in the graph",
    "rate among held": "acceptance rate among the papers held",
}
STATED_EXTREMES = {"low": "{} (lowest stated)", "high": "{} (highest stated)"}
# Words that make a column a share of a whole (0.287), shown in percent (28.7%)
PERCENT_WORDS = {"rate", "share"}


def column_title(variable: str, lang: str | None = None) -> str:
    """A result column's variable as a chart's axis names it: its words (`acceptanceRate`:
    "acceptance rate", `rateHigh`: "acceptance rate (highest stated)"), in the reader's language
    where they name one of our terms (录用率) or our words say them."""
    words = _words(variable)
    base, _, end = words.rpartition(" ")
    if base and end in STATED_EXTREMES:
        return translate(STATED_EXTREMES[end], lang).format(translate(COLUMN_WORDS.get(base, base), lang))
    return translate(COLUMN_WORDS.get(words, words), lang)


def in_percent(variable: str) -> bool:
    """Whether a column holds shares of a whole (an acceptance rate, a share of reviews), which a
    chart's axis shows in percent, as the front page does."""
    return bool(PERCENT_WORDS & set(_words(variable).split()))


def _words(variable: str) -> str:
    """A variable's words, lower case: `rateAmongHeld` -> "rate among held"."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_+", " ", variable).strip().lower() or variable


def other_language_url() -> tuple[str, str]:
    """(label, URL) of this page in the other language: what the header's toggle links."""
    target = "en" if language() == "zh" else "zh"
    args = {k: v for k, v in request.args.items() if k != "lang"} | {"lang": target}
    return ("English" if target == "en" else "中文"), f"{request.path}?{urlencode(args)}"


def install(app: Flask) -> None:
    """`_()` and the toggle in templates, `g.lang` set when a page renders (an API request never
    pays for choosing), the cookie kept, and Vary naming the cookie and Accept-Language on every
    answer whose language was chosen (a shared cache must not hand a Chinese page to an English reader)."""

    @app.context_processor
    def chosen_language() -> dict[str, str]:
        language()  # templates read g.lang
        return {}

    @app.after_request
    def remember_language(response: Response) -> Response:
        if "lang" in g:  # chosen for this answer: from the cookie or Accept-Language when the URL has no ?lang=
            response.vary.update(LANGUAGE_FROM)
        asked = request.args.get("lang")
        if asked in LANGUAGES and request.cookies.get(COOKIE) != asked:
            response.set_cookie(COOKIE, asked, max_age=365 * 24 * 3600, samesite="Lax")
        return response

    app.jinja_env.globals.update(_=translate, other_language=other_language_url, PARAMETER_KINDS=PARAMETER_KINDS)
    app.jinja_env.filters["column_title"] = column_title
    app.jinja_env.filters["problem"] = lambda problem: problem_shown(problem)["shown"]
    app.jinja_env.filters["column_titles"] = lambda columns: {c: column_title(c) for c in columns}
    app.jinja_env.filters["in_percent"] = lambda columns: [c for c in columns if in_percent(c)]
