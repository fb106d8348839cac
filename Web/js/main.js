// Starts the viewer on the page: the source is the element's data-src (filled in by `tessera serve` for
// /view/{identifier}) or the page's ?src= query; ?cache= sets the tile budget in megabytes. The viewer is
// window.tessera.viewer, for the console and the tests.

import { enableControls, toggleFullScreen } from "./controls.js";
import { enableDoubleTap } from "./handlers/doubletap.js";
import { enableDrag } from "./handlers/drag.js";
import { enableKeyboard } from "./handlers/keyboard.js";
import { enablePinch } from "./handlers/pinch.js";
import { enableWheel } from "./handlers/wheel.js";
import { enableHash, viewFromHash } from "./hash.js";
import { enableOverview } from "./overview.js";
import { openSource } from "./sources.js";
import * as tiling from "./tiling.js";
import { Viewer } from "./viewer.js";

async function start() {
  const element = document.querySelector(".tessera-viewer");
  const query = new URLSearchParams(location.search);
  const address = element.dataset.src || query.get("src");
  window.tessera = { tiling };
  if (!address) {
    fail(element, "Nothing to show: open /view/{identifier}, or /view?src= with the address of an info.json or .dzi.");
    return;
  }
  try {
    const source = await openSource(address);
    const megabytes = Number(query.get("cache"));
    const options = { view: viewFromHash(location.hash) };
    if (megabytes > 0) options.cacheBytes = Math.round(megabytes * (1 << 20));
    const viewer = new Viewer(element, source, options);
    enableDrag(viewer);
    enablePinch(viewer);
    enableWheel(viewer);
    enableDoubleTap(viewer);
    enableKeyboard(viewer, () => toggleFullScreen(element));
    enableControls(viewer);
    enableOverview(viewer);
    enableHash(viewer);
    element.focus();
    window.tessera.viewer = viewer;
  } catch (error) {
    fail(element, error.message);
  }
}

function fail(element, message) {
  const status = element.querySelector(".tessera-status");
  status.textContent = message;
  status.hidden = false;
  window.tessera.error = message;
}

start();
