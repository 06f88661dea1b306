// A row of labelled figures (a label over a large value, as Streamlit's metric draws one), as plain text:
// one element for the row, where each metric and its column were several. Redrawn in place on every run.
export default function (component) {
  const { data, parentElement } = component;
  const root = componentRoot(parentElement, "rsr-figures");
  data.figures.forEach((figure, i) => {
    let cell = root.children[i];
    if (!cell) {
      cell = root.appendChild(document.createElement("div"));
      cell.className = "figure";
      cell.appendChild(document.createElement("div")).className = "label";
      cell.appendChild(document.createElement("div")).className = "value";
    }
    if (cell.firstChild.textContent !== figure.label) cell.firstChild.textContent = figure.label;
    if (cell.lastChild.textContent !== figure.value) cell.lastChild.textContent = figure.value;
  });
  while (root.children.length > data.figures.length) root.lastChild.remove();
}
