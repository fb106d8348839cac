// Zooms about the cursor on wheel and trackpad scrolls: each notch (100 pixels of scroll) doubles or halves the zoom,
// compounding into one smooth animation while the wheel keeps turning.

const pixelsPerDoubling = 100;
const lineHeight = 16;

/** Makes the wheel over `viewer.canvas` zoom about the cursor. */
export function enableWheel(viewer) {
  viewer.canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const pixels = event.deltaY * (event.deltaMode === 1 ? lineHeight : event.deltaMode === 2 ? 400 : 1);
    const box = viewer.canvas.getBoundingClientRect();
    viewer.zoomBy(2 ** (-pixels / pixelsPerDoubling), { x: event.clientX - box.left, y: event.clientY - box.top });
  }, { passive: false });
}
