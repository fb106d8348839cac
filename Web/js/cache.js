// The decoded-tile cache (TileCache.swift): a byte budget, least recently used tiles evicted first, pinned tiles
// (what the current frame draws) never evicted. A tile costs width * height * 4 bytes, what its decoded bitmap
// takes; tiles being fetched reserve their cost ahead, so the cache plus the tiles in flight stay within budget.

/** A byte-budgeted LRU cache of decoded tiles. The Map's insertion order is the recency order. */
export class TileCache {
  constructor(byteBudget) {
    this.byteBudget = byteBudget;
    this.tiles = new Map();
    this.pinned = new Set();
    this.statistics = { hits: 0, misses: 0, evictions: 0, bytes: 0, peakBytes: 0, count: 0, reservedBytes: 0 };
  }

  /** Stores `tile` ({ bitmap, ... }) for `key` at `cost` bytes, arrived at `arrivalTime` ms, handing back the
   * `releasing` bytes reserved for it; evicts first so the total never goes over the budget for unpinned tiles. */
  insert(key, tile, cost, arrivalTime, releasing = 0) {
    this.remove(key);
    this.statistics.reservedBytes -= releasing;
    this.trim(this.byteBudget - cost);
    this.tiles.set(key, { tile, cost, arrivalTime });
    this.statistics.bytes += cost;
    this.trim(this.byteBudget);
  }

  /** Sets `bytes` aside for a tile being fetched, evicting to make room; false, evicting nothing, when even
   * evicting every unpinned tile would not make room, so the caller waits. */
  reserve(bytes) {
    let pinnedBytes = 0;
    for (const [key, entry] of this.tiles) if (this.pinned.has(key)) pinnedBytes += entry.cost;
    if (pinnedBytes + this.statistics.reservedBytes + bytes > this.byteBudget) return false;
    this.trim(this.byteBudget - bytes);
    this.statistics.reservedBytes += bytes;
    return true;
  }

  /** Gives back a reservation for a tile that will not arrive. */
  release(bytes) {
    this.statistics.reservedBytes -= bytes;
  }

  /** The entry for `key`, marked as just used; counts a hit or a miss. */
  tile(key) {
    const entry = this.probe(key);
    if (entry) this.statistics.hits += 1;
    else this.statistics.misses += 1;
    return entry;
  }

  /** The entry for `key`, marked as just used, without counting (placeholder lookups). */
  probe(key) {
    const entry = this.tiles.get(key);
    if (entry) {
      this.tiles.delete(key);
      this.tiles.set(key, entry);
    }
    return entry;
  }

  /** Whether a tile for `key` is held; changes neither the order nor the statistics. */
  has(key) {
    return this.tiles.has(key);
  }

  /** Makes `keys` the pinned set, then evicts what is no longer pinned if over budget. */
  setPinned(keys) {
    this.pinned = keys;
    this.trim(this.byteBudget);
  }

  /** Drops the tile for `key`, if held, and frees its bitmap. */
  remove(key) {
    const entry = this.tiles.get(key);
    if (!entry) return;
    this.tiles.delete(key);
    this.statistics.bytes -= entry.cost;
    this.statistics.count = this.tiles.size;
    entry.tile.bitmap.close();
  }

  /** Evicts unpinned tiles, least recently used first, while the tiles and reservations exceed `limit` bytes. */
  trim(limit) {
    for (const [key, entry] of this.tiles) {
      if (this.statistics.bytes + this.statistics.reservedBytes <= limit) break;
      if (this.pinned.has(key)) continue;
      this.tiles.delete(key);
      this.statistics.bytes -= entry.cost;
      this.statistics.evictions += 1;
      entry.tile.bitmap.close();
    }
    this.statistics.count = this.tiles.size;
    this.statistics.peakBytes = Math.max(this.statistics.peakBytes, this.statistics.bytes);
  }
}
