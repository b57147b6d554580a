// Ctrl+Enter (or Cmd+Enter) in a query box runs the query, as in other SPARQL editors.
document.addEventListener("keydown", (event) => {
  const box = event.target;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && box instanceof HTMLTextAreaElement && box.form) {
    event.preventDefault();
    box.form.requestSubmit();
  }
});
