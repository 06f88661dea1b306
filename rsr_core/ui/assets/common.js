// Put in front of every component's code by rsr_core/ui/component.py.
// The element a component draws into: found again on every run (redrawn in place), created on the first.
function componentRoot(parentElement, className) {
  let root = parentElement.querySelector(`.${className}`);
  if (!root) {
    root = document.createElement("div");
    root.className = className;
    parentElement.appendChild(root);
  }
  return root;
}

