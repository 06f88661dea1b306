// A runbook lineage's critic rounds as cards of plain text (textContent only: runbook and hidden-test text is
// never HTML): each round's heading, the runbook with every flagged span marked, then its flags, readable at a
// normal width (kind, stage, score and span; the runbook text; the hidden text it matched and where from; why).
function line(parent, cls, text) {
  const el = parent.appendChild(document.createElement("div"));
  el.className = cls;
  el.textContent = text;
  return el;
}

function round(r) {
  const box = document.createElement("section");
  box.className = "rsr-round";
  line(box, "title", r.title);
  const text = box.appendChild(document.createElement("pre"));
  for (const [part, flagged] of r.segments) {
    if (flagged) text.appendChild(document.createElement("mark")).textContent = part;
    else text.appendChild(document.createTextNode(part));
  }
  if (!r.flags.length) {
    line(box, "caption", "no flags");
    return box;
  }
  const list = box.appendChild(document.createElement("details"));
  list.open = true;
  list.appendChild(document.createElement("summary")).textContent = r.summary;
  for (const f of r.flags) {
    const flag = list.appendChild(document.createElement("div"));
    flag.className = "flag";
    line(flag, "head", f.head);
    line(flag, "evidence", "runbook text: " + f.evidence);
    if (f.matched) line(flag, "matched", f.matched);
    if (f.reason) line(flag, "caption", f.reason);
  }
  return box;
}

export default function (component) {
  const { data, parentElement } = component;
  const root = componentRoot(parentElement, "rsr-rounds");
  root.replaceChildren(...data.rounds.map(round));
}
