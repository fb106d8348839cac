// The viewer core: one source, one scroll viewport, a layout, a cache, a loader, a composer and a drawer, and a
// frame loop on requestAnimationFrame that runs only while something changes (a view animation, a fade, an
// arrival). Handlers and controls live in their own files and drive it through setView, zoomBy and panBy.
//
//   view change -> plan (TiledLayout) -> loader.update (backstop, visible, prefetch) -> tiles arrive in the cache
//   frame       -> composer.drawList (exact tiles or stand-ins) -> cache pins what is drawn -> drawer.draw

import { TileCache } from "./cache.js";
import { TileComposer } from "./composer.js";
import { Drawer } from "./drawer.js";
import { TileLoader } from "./loader.js";
import { ScrollViewport, TiledLayerConfiguration, TiledLayout } from "./tiling.js";

const animationDuration = 250; // ms, for button, key, wheel and double-click zooms

/** Shows a tiled image in `element`. */
export class Viewer extends EventTarget {
  /** Options: cacheBytes (the decoded-tile budget, default 64 MB), concurrency (tiles fetched at once, 6),
   * background (CSS colour), fadeDuration (seconds, 0.25). */
  constructor(element, source, { cacheBytes = 64 << 20, concurrency = 6, background = "#161616",
    fadeDuration = 0.25, view = null } = {}) {
    super();
    this.element = element;
    this.source = source;
    this.canvas = element.querySelector("canvas.tessera-canvas");
    this.drawer = new Drawer(this.canvas, background);
    this.contentSize = { width: source.width, height: source.height };
    // The pyramid holds 2^j pixels per image pixel, so its grid is the layout's at contentsScale 1, and the screen's
    // devicePixelRatio multiplies the zoom the level is chosen for: the smallest density >= zoom * devicePixelRatio.
    this.layout = new TiledLayout(new TiledLayerConfiguration({ tileWidth: source.tileWidth,
      tileHeight: source.tileHeight, levelsOfDetail: source.levelCount, levelsOfDetailBias: 0, contentsScale: 1,
      fadeDuration }), this.contentSize);
    this.composer = new TileComposer(this.layout);
    this.cache = new TileCache(cacheBytes);
    this.loader = new TileLoader(source, this.cache, { concurrency, onArrival: () => this.requestFrame() });
    this.pixelRatio = window.devicePixelRatio || 1;
    this.viewport = new ScrollViewport(this.contentSize, this.measure());
    this.drawer.resize(this.viewport.viewSize, this.pixelRatio);
    this.animation = null;
    this.frameRequested = false;
    this.timing = { viewChangedAt: 0, firstPaintMs: null, fullySharpMs: null, drawnTiles: 0, sharp: false };
    this.plan = null;
    new ResizeObserver(() => this.resize()).observe(element);
    if (view) this.apply(view);
    else this.viewChanged();
    this.timing.viewChangedAt = 0; // the first view's sharpness counts from navigation start
  }

  // MARK: - The view

  /** The view: the content point at the centre of the view (image pixels) and the zoom (CSS pixels per image
   * pixel). */
  get view() {
    const { width, height } = this.viewport.viewSize;
    const centre = this.viewport.contentPoint({ x: width / 2, y: height / 2 });
    return { x: centre.x, y: centre.y, zoom: this.viewport.zoomScale };
  }

  /** The zoom limits (ZoomLimits): the fit and one level past 1:1. */
  get zoomLimits() {
    return this.viewport.zoomLimits;
  }

  /** Shows `view` ({x, y} centre in image pixels and/or zoom; missing ones keep their value), within the limits and
   * bounds; animated unless `animate` is false. `focus` (view point) keeps the content under it fixed instead. */
  setView(view, { animate = true, focus = null } = {}) {
    const current = this.view;
    const target = { x: view.x ?? current.x, y: view.y ?? current.y,
      zoom: this.viewport.zoomLimits.clamp(view.zoom ?? current.zoom) };
    if (!animate) {
      this.animation = null;
      if (!focus) {
        this.apply(target);
        return;
      }
      this.viewport.zoom(target.zoom, focus);
      this.viewChanged();
      return;
    }
    this.animation = { from: current, to: target, focus, anchor: focus && this.viewport.contentPoint(focus),
      start: performance.now() };
    this.requestFrame();
  }

  /** Zooms by `factor` about `focus` (view point; the centre by default), animated. Repeated calls while an
   * animation runs compound on its target, so wheel steps add up smoothly. */
  zoomBy(factor, focus = null, { animate = true } = {}) {
    const zoom = (this.animation?.to.zoom ?? this.viewport.zoomScale) * factor;
    const point = focus ?? { x: this.viewport.viewSize.width / 2, y: this.viewport.viewSize.height / 2 };
    this.setView({ zoom }, { animate, focus: point });
  }

  /** Pans by `delta` view points (positive x shows content further right). */
  panBy(delta, { animate = false } = {}) {
    const view = this.animation?.to ?? this.view;
    const zoom = this.viewport.zoomScale;
    this.setView({ x: view.x + delta.x / zoom, y: view.y + delta.y / zoom }, { animate });
  }

  /** Fits the whole image, centred. */
  home({ animate = true } = {}) {
    this.setView({ x: this.contentSize.width / 2, y: this.contentSize.height / 2, zoom: 0 }, { animate });
  }

  /** Puts `view` on the viewport at once. */
  apply(view) {
    const { width, height } = this.viewport.viewSize;
    this.viewport.zoom(view.zoom);
    this.viewport.scroll({ x: view.x * this.viewport.zoomScale - width / 2,
      y: view.y * this.viewport.zoomScale - height / 2 });
    this.viewChanged();
  }

  /** Advances the running animation to `now`: zoom moves evenly in log scale; with a focus, the content under it
   * stays put, otherwise the centre moves evenly. */
  step(now) {
    const { from, to, focus, anchor, start } = this.animation;
    const t = Math.min((now - start) / animationDuration, 1);
    const ease = 1 - (1 - t) ** 3;
    const zoom = Math.exp(Math.log(from.zoom) + (Math.log(to.zoom) - Math.log(from.zoom)) * ease);
    if (focus) {
      this.viewport.zoom(zoom, focus);
      this.viewport.scroll({ x: anchor.x * this.viewport.zoomScale - focus.x,
        y: anchor.y * this.viewport.zoomScale - focus.y });
      this.viewChanged();
    } else {
      this.apply({ x: from.x + (to.x - from.x) * ease, y: from.y + (to.y - from.y) * ease, zoom });
    }
    if (t >= 1) {
      this.animation = null;
      this.dispatchEvent(new Event("viewend"));
    }
  }

  /** Re-plans after any change of view: new requests, a frame, a `view` event. */
  viewChanged() {
    this.plan = this.layout.plan(this.viewport.visibleRect, this.viewport.zoomScale * this.pixelRatio);
    this.loader.update([...this.plan.backstop, ...this.plan.visible, ...this.plan.prefetch]);
    this.timing.viewChangedAt = performance.now();
    this.timing.sharp = false;
    this.requestFrame();
    this.dispatchEvent(new Event("view"));
  }

  measure() {
    const box = this.element.getBoundingClientRect();
    return { width: Math.max(1, box.width), height: Math.max(1, box.height) };
  }

  resize() {
    const size = this.measure();
    const ratio = window.devicePixelRatio || 1;
    const { width, height } = this.viewport.viewSize;
    if (size.width === width && size.height === height && ratio === this.pixelRatio) return;
    this.pixelRatio = ratio;
    this.viewport.resize(size);
    this.drawer.resize(size, ratio);
    this.viewChanged();
  }

  // MARK: - Frames

  requestFrame() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame((now) => this.frame(now));
  }

  frame(now) {
    this.frameRequested = false;
    if (this.animation) this.step(now);
    const clock = performance.now();
    const commands = this.composer.drawList(this.plan, this.cache, clock);
    this.cache.setPinned(new Set([...this.plan.visible.map((tile) => tile.key),
      ...this.plan.backstop.map((tile) => tile.key), ...commands.map((command) => command.key)]));
    this.loader.pump(); // stand-ins no longer drawn were unpinned: a tile waiting for room may fit now
    this.drawer.draw(commands, this.viewport);
    this.timing.drawnTiles = commands.length;
    if (commands.length > 0 && this.timing.firstPaintMs === null) this.timing.firstPaintMs = clock;
    const exact = commands.filter((command) => command.role === "exact" && command.alpha >= 1).length;
    const sharp = exact === this.plan.visible.length;
    if (sharp && !this.timing.sharp) {
      this.timing.fullySharpMs = clock - this.timing.viewChangedAt;
      this.dispatchEvent(new Event("sharp"));
    }
    this.timing.sharp = sharp;
    if (this.animation || commands.some((command) => command.alpha < 1)) this.requestFrame();
    this.dispatchEvent(new Event("frame"));
  }

  // MARK: - Debugging

  /** What the tests and benchmarks read: cache occupancy against the budget, requests, the level and zoom, what the
   * last frame drew, and times in ms (first paint since navigation start; full sharpness since the view last
   * changed, or since navigation start for the first view). */
  debug() {
    const cache = this.cache.statistics;
    const loader = this.loader.statistics;
    return { cacheBytes: cache.bytes, reservedBytes: cache.reservedBytes, cacheBudget: this.cache.byteBudget,
      peakCacheBytes: cache.peakBytes, evictions: cache.evictions, cachedTiles: cache.count,
      inFlight: this.loader.inFlight, requested: loader.requested, completed: loader.completed,
      aborted: loader.aborted, failed: loader.failed, level: this.plan.level?.level ?? null,
      zoom: this.viewport.zoomScale, offset: { ...this.viewport.contentOffset }, pixelRatio: this.pixelRatio,
      view: this.view, zoomLimits: { ...this.viewport.zoomLimits }, drawnTiles: this.timing.drawnTiles,
      sharp: this.timing.sharp, animating: this.animation !== null, firstPaintMs: this.timing.firstPaintMs,
      fullySharpMs: this.timing.sharp ? this.timing.fullySharpMs : null };
  }
}
