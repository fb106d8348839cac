// Pans while one pointer (mouse, pen or finger) is held down and moved; a second finger hands over to pinch.js.

/** Makes dragging on `viewer.canvas` pan the view. */
export function enableDrag(viewer) {
  const pointers = new Map();
  const canvas = viewer.canvas;
  canvas.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "mouse" && event.button !== 0) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    canvas.setPointerCapture(event.pointerId);
    canvas.classList.add("tessera-dragging");
  });
  canvas.addEventListener("pointermove", (event) => {
    const last = pointers.get(event.pointerId);
    if (!last) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 1) viewer.panBy({ x: last.x - event.clientX, y: last.y - event.clientY });
  });
  const end = (event) => {
    pointers.delete(event.pointerId);
    if (pointers.size === 0) canvas.classList.remove("tessera-dragging");
  };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
}
