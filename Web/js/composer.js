// A frame's draw list from a plan and the cache (TileComposer.swift), so the screen is never blank where anything
// is known: each visible tile itself if cached; else its nearest cached coarser ancestor, cropped and magnified;
// else, if the next finer level holds all four tiles under it, those minified. Painting order: coarser
// placeholders (coarsest first), finer ones, then the exact tiles, so a tile fading in lies over its stand-in.

import { ancestorKey, tileKey } from "./tiling.js";

/** Builds draw commands: { key, tile, source: {x, y, width, height} in tile pixels, edges: {x0, y0, x1, y1} in
 * content points, alpha, role }. */
export class TileComposer {
  constructor(layout) {
    this.layout = layout;
    this.levels = layout.configuration.levelRange(layout.contentSize);
  }

  /** The draw list for `plan` at `now` (ms, the clock that stamped arrivals). */
  drawList(plan, cache, now) {
    if (!plan.level || !this.levels) return [];
    const coarser = [], finer = [], exact = [];
    for (const planned of plan.visible) {
      const cached = cache.tile(planned.key);
      if (cached) {
        const alpha = this.fade(cached, now);
        const placeholder = alpha < 1 ? this.ancestor(planned, plan.level, cache, now) : null;
        if (placeholder) coarser.push(placeholder);
        exact.push(this.whole(cached, planned, plan.level, alpha, "exact"));
        continue;
      }
      const placeholder = this.ancestor(planned, plan.level, cache, now);
      if (placeholder) coarser.push(placeholder);
      else finer.push(...this.descendants(planned, plan.level, cache, now));
    }
    const coarsestFirst = coarser.map((command, index) => ({ command, index }))
      .sort((a, b) => a.command.level - b.command.level || a.index - b.index).map(({ command }) => command);
    return [...coarsestFirst, ...finer, ...exact];
  }

  /** The nearest coarser cached tile covering `planned`, cropped to it. */
  ancestor(planned, level, cache, now) {
    for (let up = 1; up <= level.level - this.levels[0]; up += 1) {
      const { column, row } = ancestorKey(level.level, planned.column, planned.row, up);
      const coarse = this.layout.level(level.level - up);
      const key = tileKey(coarse.level, column, row);
      const cached = cache.probe(key);
      if (!cached) continue;
      const origin = coarse.rect(column, row);
      const edges = level.edges(planned.column, planned.row);
      const scale = coarse.pixelsPerPoint;
      return { key, level: coarse.level, tile: cached.tile, edges,
        source: { x: (edges.x0 - origin.x) * scale, y: (edges.y0 - origin.y) * scale,
          width: (edges.x1 - edges.x0) * scale, height: (edges.y1 - edges.y0) * scale },
        alpha: this.fade(cached, now), role: "coarserPlaceholder" };
    }
    return null;
  }

  /** The next finer level's tiles under `planned`, if the cache holds every one of them. */
  descendants(planned, level, cache, now) {
    if (level.level >= this.levels[1]) return [];
    const fine = this.layout.level(level.level + 1);
    const commands = [];
    for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]]) {
      const column = 2 * planned.column + dx, row = 2 * planned.row + dy;
      if (!fine.contains(column, row)) continue;
      const cached = cache.probe(tileKey(fine.level, column, row));
      if (!cached) return [];
      commands.push(this.whole(cached, fine.planned(column, row), fine, this.fade(cached, now), "finerPlaceholder"));
    }
    return commands;
  }

  whole(cached, planned, level, alpha, role) {
    return { key: planned.key, level: level.level, tile: cached.tile, edges: level.edges(planned.column, planned.row),
      source: { x: 0, y: 0, width: planned.pixelSize.width, height: planned.pixelSize.height }, alpha, role };
  }

  /** 0 on arrival to 1 after fadeDuration seconds. */
  fade(cached, now) {
    const duration = this.layout.configuration.fadeDuration * 1000;
    if (duration <= 0) return 1;
    return Math.min(Math.max((now - cached.arrivalTime) / duration, 0), 1);
  }
}
