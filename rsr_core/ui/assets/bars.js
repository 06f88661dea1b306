// Labelled progress bars as plain text and boxes (textContent only: reviewer names come from the database):
// a first bar across the width, the others side by side under it. One element for the page, where each
// Streamlit progress bar was one (and a row of them one more); redrawn in place on every run.
export default function (component) {
  const { data, parentElement } = component;
  const root = componentRoot(parentElement, "rsr-bars");
  const rows = [data.bars.slice(0, 1), data.bars.slice(1)];
  rows.forEach((bars, i) => {
    const row = root.children[i] || root.appendChild(document.createElement("div"));
    row.className = "row";
    bars.forEach((bar, j) => {
      let cell = row.children[j];
      if (!cell) {
        cell = row.appendChild(document.createElement("div"));
        cell.className = "bar";
        cell.appendChild(document.createElement("div")).className = "label";
        cell.appendChild(document.createElement("div")).className = "track";
        cell.lastChild.appendChild(document.createElement("div")).className = "fill";
      }
      if (cell.firstChild.textContent !== bar.label) cell.firstChild.textContent = bar.label;
      const width = `${Math.round(Math.max(0, Math.min(1, bar.share)) * 1000) / 10}%`;
      if (cell.lastChild.firstChild.style.width !== width) cell.lastChild.firstChild.style.width = width;
    });
    while (row.children.length > bars.length) row.lastChild.remove();
  });
}
