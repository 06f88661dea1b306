// The studio's table: rows as plain text (textContent, never HTML), optional checkboxes whose choice is the
// component's state "selected" (row keys), kept by Python across pages; a column may hold buttons that open
// their row (the trigger "opened", a row key). Redrawn in place on every run: a table
// of the same columns keeps its rows and cells and only what changed is written (a review changes a row or
// two of the queue; drawing the whole table anew made the browser lay out every row again).
function header(table, data, pick) {
  const head = table.createTHead().insertRow();
  if (pick) head.appendChild(document.createElement("th")).className = "pick";
  data.columns.forEach((label, i) => {
    const th = document.createElement("th");
    th.textContent = label;
    if (data.numeric[i]) th.className = "num";
    head.appendChild(th);
  });
}

function setText(td, text) {
  if (td.textContent !== text) td.textContent = text;
}

function setClass(el, names) {
  const cls = names.filter(Boolean).join(" ");
  if (el.className !== cls) el.className = cls;
}

function fill(tr, cells, r, data, pick, selected, send, openRow) {
  const key = data.keys[r];
  if (tr.dataset.key !== key) tr.dataset.key = key;
  const tone = (data.tones || [])[r];
  const classes = [tone && "tone-" + tone, pick && selected.has(key) && "chosen"];
  setClass(tr, classes);
  let offset = 0;
  if (pick) {
    offset = 1;
    if (!tr.cells.length) {
      const box = document.createElement("input");
      box.type = "checkbox";
      tr.insertCell().appendChild(box).parentElement.className = "pick";
    }
    const box = tr.cells[0].firstChild;
    box.checked = selected.has(key);
    box.setAttribute("aria-label", "select " + key);
    tr.onclick = (e) => {
      if (e.target.tagName === "A") return;
      if (selected.has(key)) selected.delete(key);
      else selected.add(key);
      send();
    };
  }
  cells.forEach((text, i) => {
    const td = tr.cells[i + offset] || tr.insertCell();
    if (i === data.open) {
      // The row's key as a button that opens the row (a trigger for Python), not a tick of its checkbox.
      let open = td.firstElementChild;
      if (!open || open.tagName !== "BUTTON") {
        open = document.createElement("button");
        open.type = "button";
        open.className = "open";
        td.replaceChildren(open);
      }
      setText(open, text);
      open.onclick = (e) => {
        e.stopPropagation();
        openRow(key);
      };
    } else {
      setText(td, text);
    }
    const title = text.length > 40 && !data.wrap[i] ? text : ""; // a cut value shows whole on hover
    if (td.title !== title) td.title = title;
    setClass(td, [data.numeric[i] && "num", data.wrap[i] && "wrap", data.mono[i] && "mono"]);
  });
}

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  const root = componentRoot(parentElement, "rsr-grid");
  const selected = new Set(data.selected || []);
  const pick = data.select !== "none";
  const send = () => setStateValue("selected", Array.from(selected));
  const openRow = (key) => setTriggerValue("opened", key);
  const shape = JSON.stringify([data.columns, data.numeric, pick, data.open]);
  let table = root.querySelector("table");
  if (!table || table.dataset.shape !== shape) {
    table = document.createElement("table");
    table.dataset.shape = shape;
    if (pick) table.className = "pickable";
    header(table, data, pick);
    table.createTBody();
    root.replaceChildren(table);
  }
  const body = table.tBodies[0];
  data.rows.forEach((cells, r) => {
    fill(body.rows[r] || body.insertRow(), cells, r, data, pick, selected, send, openRow);
  });
  while (body.rows.length > data.rows.length) body.deleteRow(-1);
}
