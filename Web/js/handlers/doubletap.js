// Double-click or double-tap zooms in two times about that point; with Shift (or Alt) it zooms out.

const tapInterval = 300; // ms between the two taps
const tapSlop = 24; // CSS pixels the second tap may land from the first

/** Makes double-clicks and double-taps on `viewer.canvas` zoom about the point. */
export function enableDoubleTap(viewer) {
  const canvas = viewer.canvas;
  const zoomAt = (event) => {
    const box = canvas.getBoundingClientRect();
    viewer.zoomBy(event.shiftKey || event.altKey ? 0.5 : 2, { x: event.clientX - box.left, y: event.clientY - box.top });
  };
  // Touch pointers send no dblclick in every browser, so taps are paired here, and a dblclick that follows
  // touches is left alone in the browsers that do send one.
  let lastPointerType = "mouse";
  let lastTap = null;
  canvas.addEventListener("pointerdown", (event) => {
    lastPointerType = event.pointerType;
  });
  canvas.addEventListener("dblclick", (event) => {
    event.preventDefault();
    if (lastPointerType !== "touch") zoomAt(event);
  });
  canvas.addEventListener("pointerup", (event) => {
    if (event.pointerType !== "touch") return;
    const now = performance.now();
    if (lastTap && now - lastTap.time < tapInterval
      && Math.hypot(event.clientX - lastTap.x, event.clientY - lastTap.y) < tapSlop) {
      lastTap = null;
      zoomAt(event);
      return;
    }
    lastTap = { time: now, x: event.clientX, y: event.clientY };
  });
}
