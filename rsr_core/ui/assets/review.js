// The review form: reviewer and reason typed into plain inputs (kept by the browser between runs), approve and
// reject as buttons that set the component's state "decision" to {decision, reviewer, reason, nonce} (a new
// nonce every click, so each click is a change Python's callback sees once); Python records it before the
// page's next run reads anything. Enter in a field decides nothing. The reason is emptied when `data.epoch`
// changes (its decision was recorded, or another round is shown); the reviewer is the session's remembered
// name unless one is being typed. Text only (textContent): a name or an error is never markup.
function field(form, name, label, longest) {
  const box = form.appendChild(document.createElement("label"));
  box.className = "field " + name;
  box.appendChild(document.createElement("span")).textContent = label;
  const input = box.appendChild(document.createElement("input"));
  input.name = name;
  input.type = "text";
  input.autocomplete = "off";
  input.maxLength = longest;
  return input;
}

function build(root, data) {
  const form = document.createElement("form");
  form.onsubmit = (e) => e.preventDefault(); // Enter in a field: no decision
  const fields = form.appendChild(document.createElement("div"));
  fields.className = "fields";
  field(fields, "reviewer", "reviewer", data.longest.reviewer);
  field(fields, "reason", "reason", data.longest.reason);
  const buttons = form.appendChild(document.createElement("div"));
  buttons.className = "buttons";
  for (const decision of ["approve", "reject"]) {
    const button = buttons.appendChild(document.createElement("button"));
    button.type = "button";
    button.name = decision;
  }
  const error = form.appendChild(document.createElement("div"));
  error.className = "error";
  error.setAttribute("role", "alert");
  root.replaceChildren(form);
  return form;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const root = componentRoot(parentElement, "rsr-review");
  const form = root.querySelector("form") || build(root, data);
  const { reviewer, reason } = form.elements;
  if (form.dataset.reviewer !== data.reviewer) {
    if (document.activeElement !== reviewer) reviewer.value = data.reviewer;
    form.dataset.reviewer = data.reviewer;
  }
  if (form.dataset.epoch !== String(data.epoch)) {
    reason.value = "";
    form.dataset.epoch = String(data.epoch);
  }
  for (const button of form.querySelectorAll("button")) {
    const label = `${button.name} (${data.count})`;
    if (button.textContent !== label) button.textContent = label;
    button.disabled = !data.count; // also undoes the click's own disabling, once the run it caused is drawn
    button.onclick = () => {
      for (const b of form.querySelectorAll("button")) b.disabled = true; // one decision per click
      const nonce = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
      setStateValue("decision", { decision: button.name, reviewer: reviewer.value, reason: reason.value, nonce });
    };
  }
  const error = form.querySelector(".error");
  if (error.textContent !== (data.error || "")) error.textContent = data.error || "";
}
