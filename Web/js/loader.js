// Fetches and decodes tiles, most urgent first, at most `concurrency` at once (TileScheduler.swift):
//
//   update(requests) -> queue (the plan's order: backstop, visible, prefetch, each centre-out)
//                    -> start: cache.reserve -> fetch (AbortController) -> createImageBitmap
//                    -> cache.insert (releasing) -> onArrival
//
// A tile in flight that the plan no longer wants is aborted; a queued one is dropped. A tile that failed is not
// asked for again until the source changes.

/** Runs tile requests for a source into a cache. */
export class TileLoader {
  constructor(source, cache, { concurrency = 6, onArrival = () => {} } = {}) {
    this.source = source;
    this.cache = cache;
    this.concurrency = concurrency;
    this.onArrival = onArrival;
    this.queue = [];
    this.running = new Map();
    this.failed = new Set();
    this.statistics = { requested: 0, completed: 0, aborted: 0, failed: 0 };
  }

  /** Makes `requests` (planned tiles in priority order) the work to do: aborts what left it, starts what can. */
  update(requests) {
    const wanted = new Set(requests.map((tile) => tile.key));
    for (const [key, job] of this.running) {
      if (!wanted.has(key)) job.controller.abort();
    }
    this.queue = requests.filter((tile) =>
      !this.cache.has(tile.key) && !this.running.has(tile.key) && !this.failed.has(tile.key));
    this.pump();
  }

  /** How many tiles are being fetched or decoded now. */
  get inFlight() {
    return this.running.size;
  }

  pump() {
    while (this.running.size < this.concurrency && this.queue.length > 0) {
      const tile = this.queue[0];
      const cost = tile.pixelSize.width * tile.pixelSize.height * 4;
      if (!this.cache.reserve(cost)) return;
      this.queue.shift();
      this.start(tile, cost);
    }
  }

  async start(tile, cost) {
    const controller = new AbortController();
    this.running.set(tile.key, { controller });
    this.statistics.requested += 1;
    let bitmap = null;
    try {
      const response = await fetch(this.source.tileURL(tile.level, tile.column, tile.row), { signal: controller.signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const blob = await response.blob();
      bitmap = await createImageBitmap(blob);
      if (controller.signal.aborted) throw new DOMException("tile left the view", "AbortError");
      const content = this.source.tileContent(tile, bitmap);
      this.running.delete(tile.key);
      this.cache.insert(tile.key, { bitmap, content }, bitmap.width * bitmap.height * 4, performance.now(), cost);
      this.statistics.completed += 1;
      this.onArrival(tile);
    } catch (error) {
      bitmap?.close();
      this.running.delete(tile.key);
      this.cache.release(cost);
      if (error.name === "AbortError") {
        this.statistics.aborted += 1;
      } else {
        this.statistics.failed += 1;
        this.failed.add(tile.key);
        console.warn(`tessera: tile ${tile.key} failed: ${error.message}`);
      }
    }
    this.pump();
  }
}
