// Building and updating the page's DOM. Views build their elements once with h() and
// then update them in place with setText/setAttr, which touch the DOM only on a change:
// focus and selection survive, and an unchanged value costs no layout work.

// The element every view draws into.
export const mainEl = document.getElementById("main");

// h("tag.class", {attr: value, text: "...", on: {click: fn}}, ...children)
export function h(spec, props, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") el.textContent = value;
    else if (key === "on") for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

// Sets text only when it changed: no layout work and no lost selection otherwise.
export function setText(el, text) { if (el.textContent !== text) el.textContent = text; }

// Sets an attribute only when it changed; null or undefined removes it.
export function setAttr(el, name, value) {
  if (value === null || value === undefined) { if (el.hasAttribute(name)) el.removeAttribute(name); }
  else if (el.getAttribute(name) !== String(value)) el.setAttribute(name, value);
}
