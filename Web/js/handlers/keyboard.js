// Keys, when the viewer has the focus: arrows pan by a tenth of the view, + and - zoom two times about the centre,
// 0 or Home fits the image, f toggles full screen.

/** Makes the keys above drive `viewer` while `viewer.element` (focusable) has the focus. */
export function enableKeyboard(viewer, toggleFullScreen) {
  viewer.element.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey) return;
    const { width, height } = viewer.viewport.viewSize;
    const actions = {
      ArrowLeft: () => viewer.panBy({ x: -width / 10, y: 0 }, { animate: true }),
      ArrowRight: () => viewer.panBy({ x: width / 10, y: 0 }, { animate: true }),
      ArrowUp: () => viewer.panBy({ x: 0, y: -height / 10 }, { animate: true }),
      ArrowDown: () => viewer.panBy({ x: 0, y: height / 10 }, { animate: true }),
      "+": () => viewer.zoomBy(2),
      "=": () => viewer.zoomBy(2),
      "-": () => viewer.zoomBy(0.5),
      _: () => viewer.zoomBy(0.5),
      0: () => viewer.home(),
      Home: () => viewer.home(),
      f: () => toggleFullScreen(),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}
