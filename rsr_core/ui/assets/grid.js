// The studio's table: rows as plain text (textContent, never HTML), optional checkboxes whose choice is the
// component's state "selected" (row keys), kept by Python across pages. Redrawn in place on every run.
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let root = parentElement.querySelector(".rsr-grid");
  if (!root) {
    root = document.createElement("div");
    root.className = "rsr-grid";
    parentElement.appendChild(root);
  }
  const selected = new Set(data.selected || []);
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  const pick = data.select !== "none";
  if (pick) table.className = "pickable";
  if (pick) head.appendChild(document.createElement("th")).className = "pick";
  data.columns.forEach((label, i) => {
    const th = document.createElement("th");
    th.textContent = label;
    if (data.numeric[i]) th.className = "num";
    head.appendChild(th);
  });
  const body = table.createTBody();
  const send = () => setStateValue("selected", Array.from(selected));
  data.rows.forEach((cells, r) => {
    const key = data.keys[r];
    const tr = body.insertRow();
    tr.dataset.key = key;
    const tone = (data.tones || [])[r];
    if (tone) tr.classList.add("tone-" + tone);
    if (pick) {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = selected.has(key);
      box.setAttribute("aria-label", "select " + key);
      tr.insertCell().appendChild(box).parentElement.className = "pick";
      if (box.checked) tr.classList.add("chosen");
      tr.onclick = (e) => {
        if (e.target.tagName === "A") return;
        if (selected.has(key)) selected.delete(key);
        else selected.add(key);
        send();
      };
    }
    cells.forEach((text, i) => {
      const td = tr.insertCell();
      td.textContent = text;
      if (text.length > 40 && !data.wrap[i]) td.title = text; // a cut value shows whole on hover
      if (data.numeric[i]) td.classList.add("num");
      if (data.wrap[i]) td.classList.add("wrap");
      if (data.mono[i]) td.classList.add("mono");
    });
  });
  root.replaceChildren(table);
}
