// Zooms about the centre of a two-finger pinch and pans with that centre (pointer events, so touch screens and
// trackpads that send touch pointers both work).

/** Makes two-pointer pinches on `viewer.canvas` zoom and pan the view. */
export function enablePinch(viewer) {
  const pointers = new Map();
  const canvas = viewer.canvas;
  let last = null;
  const measure = () => {
    const [a, b] = [...pointers.values()];
    const box = canvas.getBoundingClientRect();
    return { centre: { x: (a.x + b.x) / 2 - box.left, y: (a.y + b.y) / 2 - box.top },
      distance: Math.hypot(a.x - b.x, a.y - b.y) };
  };
  canvas.addEventListener("pointerdown", (event) => {
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    last = pointers.size === 2 ? measure() : null;
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!pointers.has(event.pointerId)) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size !== 2 || !last) return;
    const now = measure();
    // The content under the last centre keeps its place through the zoom, then follows the fingers to the new one.
    if (last.distance > 0) viewer.zoomBy(now.distance / last.distance, last.centre, { animate: false });
    viewer.panBy({ x: last.centre.x - now.centre.x, y: last.centre.y - now.centre.y });
    last = now;
  });
  const end = (event) => {
    pointers.delete(event.pointerId);
    last = null;
  };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
}
