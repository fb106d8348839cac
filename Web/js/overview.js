// The overview map: the whole image, small, with the viewport's rectangle on it; a click or a drag on it moves
// the view's centre there.

const side = 180; // CSS pixels, the overview's longer side

/** Builds the overview in `viewer.element` and keeps its rectangle on the view. */
export function enableOverview(viewer) {
  const overview = viewer.element.querySelector(".tessera-overview");
  const image = overview.querySelector("img");
  const box = overview.querySelector(".tessera-overview-view");
  const { width, height } = viewer.contentSize;
  const scale = side / Math.max(width, height);
  overview.style.width = `${Math.round(width * scale)}px`;
  overview.style.height = `${Math.round(height * scale)}px`;
  // Asked for after the first paint, so that it does not compete with the tiles the first paint needs.
  const load = () => {
    if (viewer.timing.firstPaintMs === null) return;
    viewer.removeEventListener("frame", load);
    image.src = viewer.source.overviewURL(side * (window.devicePixelRatio || 1));
  };
  viewer.addEventListener("frame", load);

  const update = () => {
    const rect = viewer.viewport.visibleRect;
    const x0 = Math.max(rect.x, 0), y0 = Math.max(rect.y, 0);
    const x1 = Math.min(rect.x + rect.width, width), y1 = Math.min(rect.y + rect.height, height);
    Object.assign(box.style, { left: `${x0 * scale}px`, top: `${y0 * scale}px`,
      width: `${(x1 - x0) * scale}px`, height: `${(y1 - y0) * scale}px` });
  };
  viewer.addEventListener("view", update);
  update();

  let dragging = null;
  const moveTo = (event) => {
    const bounds = overview.getBoundingClientRect();
    viewer.setView({ x: (event.clientX - bounds.left) / scale, y: (event.clientY - bounds.top) / scale },
      { animate: false });
  };
  overview.addEventListener("pointerdown", (event) => {
    dragging = event.pointerId;
    overview.setPointerCapture(event.pointerId);
    moveTo(event);
    event.preventDefault();
  });
  overview.addEventListener("pointermove", (event) => {
    if (event.pointerId === dragging) moveTo(event);
  });
  const end = (event) => {
    if (event.pointerId === dragging) dragging = null;
  };
  overview.addEventListener("pointerup", end);
  overview.addEventListener("pointercancel", end);
}
