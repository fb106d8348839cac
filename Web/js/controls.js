// The buttons (zoom in, zoom out, home, full screen) and the zoom readout, as a percentage of 1:1.

/** Toggles full screen on `element`. */
export function toggleFullScreen(element) {
  if (document.fullscreenElement) document.exitFullscreen();
  else element.requestFullscreen?.();
}

/** Wires the buttons in `viewer.element` (by their data-action) and keeps the readout current. */
export function enableControls(viewer) {
  const actions = {
    "zoom-in": () => viewer.zoomBy(2),
    "zoom-out": () => viewer.zoomBy(0.5),
    home: () => viewer.home(),
    "full-screen": () => toggleFullScreen(viewer.element),
  };
  for (const button of viewer.element.querySelectorAll("button[data-action]")) {
    button.addEventListener("click", () => {
      actions[button.dataset.action]();
      viewer.element.focus();
    });
  }
  const readout = viewer.element.querySelector(".tessera-zoom");
  viewer.addEventListener("view", () => {
    readout.textContent = `${formatZoom(viewer.viewport.zoomScale)}%`;
  });
  readout.textContent = `${formatZoom(viewer.viewport.zoomScale)}%`;
}

function formatZoom(zoom) {
  const percent = zoom * 100;
  return percent >= 10 ? String(Math.round(percent)) : percent.toFixed(1);
}
