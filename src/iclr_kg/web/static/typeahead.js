// Type-ahead for the search boxes (every page's header, the front page's, the search page's):
// as one types, the names that match (from /search?format=json, the index) are offered in a
// <datalist>; choosing one and pressing Enter opens it (a search that is exactly one entity's
// name goes to that entity). From two characters, or one Chinese character (a word in itself).
"use strict";
(() => {
  const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
  const offer = (box) => {
    const list = document.createElement("datalist");
    list.id = `${box.id}-names`;
    box.after(list);
    box.setAttribute("list", list.id);
    box.setAttribute("autocomplete", "off");
    let timer = null;
    let asked = "";
    box.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const text = box.value.trim();
        if ((text.length < 2 && !HAN.test(text)) || text === asked) return;
        asked = text;
        const url = `/search?${new URLSearchParams({ q: text, format: "json", limit: "8" })}`;
        const answer = await fetch(url, { headers: { Accept: "application/json" } });
        if (!answer.ok || box.value.trim() !== text) return;
        const zh = document.documentElement.lang === "zh";
        list.replaceChildren(...(await answer.json()).results.map((hit) => {
          const option = document.createElement("option");
          option.value = zh && hit.label_zh ? hit.label_zh : hit.label;
          option.label = hit.kind;
          return option;
        }));
      }, 150);
    });
  };
  ["site-search", "front-q", "q"].map((id) => document.getElementById(id)).filter(Boolean).forEach(offer);
})();
