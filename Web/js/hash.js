// Keeps the view in the URL's hash, #x=2000&y=1500&zoom=0.5 (centre in image pixels, zoom in CSS pixels per image
// pixel), so a link reopens the same view; editing the hash moves the view.

const settleDelay = 150; // ms after the last change before the hash is rewritten

/** The view a hash names, or null when it names none. */
export function viewFromHash(hash) {
  const fields = new URLSearchParams(hash.replace(/^#/, ""));
  const view = { x: Number(fields.get("x")), y: Number(fields.get("y")), zoom: Number(fields.get("zoom")) };
  const valid = ["x", "y", "zoom"].every((name) => fields.has(name) && Number.isFinite(view[name])) && view.zoom > 0;
  return valid ? view : null;
}

/** The hash for `view`: centre to a tenth of a pixel, zoom to six significant digits. */
export function hashForView(view) {
  return `#x=${view.x.toFixed(1)}&y=${view.y.toFixed(1)}&zoom=${Number(view.zoom.toPrecision(6))}`;
}

/** Writes the view to the hash as it settles and follows hash edits. */
export function enableHash(viewer) {
  let timer = null;
  let written = location.hash;
  viewer.addEventListener("view", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      written = hashForView(viewer.view);
      history.replaceState(null, "", written);
    }, settleDelay);
  });
  window.addEventListener("hashchange", () => {
    if (location.hash === written) return;
    const view = viewFromHash(location.hash);
    if (view) viewer.setView(view, { animate: false });
  });
}
