// Steps of trajectories as cards of plain text (textContent only: trajectory content is never HTML). One row
// per trajectory page, or one row per turn with a cell per trajectory side by side. Special steps (harness
// control, private guidance, copied context) are folded unless linked, and so is a turn's thinking. "show all" asks Python for a cut
// block whole (state "full": block ids); the linked step is scrolled into view once.
function card(step, showAll) {
  const box = document.createElement(step.label ? "details" : "section");
  box.className = "rsr-step" + (step.highlight ? " linked" : "");
  if (step.anchor != null) box.id = "step-" + step.anchor;
  const title = document.createElement(step.label ? "summary" : "div");
  title.className = "title";
  title.textContent = step.title;
  box.appendChild(title);
  if (step.label && step.open) box.open = true;
  if (step.caption) {
    const cap = box.appendChild(document.createElement("div"));
    cap.className = "caption";
    cap.textContent = step.caption;
  }
  for (const block of step.blocks) {
    if (block.kind === "thinking") {  // the model's reasoning: folded, never part of the answer
      const fold = box.appendChild(document.createElement("details"));
      fold.className = "thinking";
      fold.appendChild(document.createElement("summary")).textContent = block.label;
      fold.appendChild(document.createElement("pre")).textContent = block.text;
      continue;
    }
    const el = box.appendChild(document.createElement(block.kind === "note" ? "div" : "pre"));
    el.className = block.kind;
    el.textContent = block.text;
    if (block.cut) {
      const more = box.appendChild(document.createElement("button"));
      more.type = "button";
      more.textContent = block.cut;
      more.onclick = () => showAll(block.id);
    }
  }
  return box;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const root = componentRoot(parentElement, "rsr-steps");
  const full = new Set(data.full || []);
  const showAll = (id) => {
    full.add(id);
    setStateValue("full", Array.from(full));
  };
  const rows = data.rows.map((row) => {
    const el = document.createElement("div");
    el.className = "row cells-" + row.cells.length;
    if (row.label) {
      const label = el.appendChild(document.createElement("div"));
      label.className = "turn";
      label.textContent = row.label;
    }
    for (const steps of row.cells) {
      const cell = el.appendChild(document.createElement("div"));
      cell.className = "cell";
      for (const step of steps) cell.appendChild(card(step, showAll));
    }
    return el;
  });
  root.replaceChildren(...rows);
  if (data.scroll != null && root.dataset.scrolled !== String(data.scroll)) {
    root.dataset.scrolled = String(data.scroll);
    const target = document.getElementById("step-" + data.scroll);
    if (target) requestAnimationFrame(() => target.scrollIntoView({ block: "start" }));
  }
}
