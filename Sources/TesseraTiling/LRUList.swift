/// Values by key in order of use, with O(1) lookup, insertion, removal and move-to-front: the least-recently-used
/// bookkeeping of the `TileCache` (behind its lock) and of the server's open images.
///
/// A doubly linked list threaded through an array by index (freed slots are reused), so that touching a value
/// allocates nothing. Inlinable, so that other modules' uses are specialised: unspecialised, each call looked up
/// the generic metadata of its slots at run time (3% of the CPU of a server's stored tile, two lookups a request).
public struct LRUList<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key
        @usableFromInline var value: Value?
        @usableFromInline var newer: Int?
        @usableFromInline var older: Int?

        @usableFromInline
        init(key: Key, value: Value?) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var indexByKey: [Key: Int] = [:]
    @usableFromInline var newest: Int?
    @usableFromInline var oldest: Int?

    /// An empty list.
    @inlinable
    public init() {}

    /// How many values are held.
    @inlinable
    public var count: Int { indexByKey.count }

    /// The value for `key`, without changing the order.
    @inlinable
    public func peek(_ key: Key) -> Value? {
        indexByKey[key].flatMap { slots[$0].value }
    }

    /// The value for `key`, made the most recently used.
    @inlinable
    public mutating func use(_ key: Key) -> Value? {
        guard let index = indexByKey[key] else { return nil }
        unlink(index)
        pushNewest(index)
        return slots[index].value
    }

    /// Stores `value` for `key` as the most recently used; returns the value it replaced.
    @discardableResult
    @inlinable
    public mutating func set(_ value: Value, for key: Key) -> Value? {
        if let index = indexByKey[key] {
            let old = slots[index].value
            slots[index].value = value
            unlink(index)
            pushNewest(index)
            return old
        }
        let slot = Slot(key: key, value: value)
        let index: Int
        if let reused = freeSlots.popLast() {
            slots[reused] = slot
            index = reused
        } else {
            slots.append(slot)
            index = slots.count - 1
        }
        indexByKey[key] = index
        pushNewest(index)
        return nil
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    @inlinable
    public mutating func remove(_ key: Key) -> Value? {
        guard let index = indexByKey.removeValue(forKey: key) else { return nil }
        unlink(index)
        let old = slots[index].value
        slots[index].value = nil
        freeSlots.append(index)
        return old
    }

    /// Removes everything.
    @inlinable
    public mutating func removeAll() {
        self = LRUList()
    }

    /// Removes values from the least recently used on, passing over the keys in `kept`, while `shouldEvict` says
    /// more must go; calls `evicted` with each one removed.
    @inlinable
    public mutating func evictOldest(
        keeping kept: Set<Key>, while shouldEvict: () -> Bool, evicted: (Key, Value) -> Void
    ) {
        var cursor = oldest
        while let index = cursor, shouldEvict() {
            cursor = slots[index].newer
            let key = slots[index].key
            if !kept.contains(key), let value = remove(key) {
                evicted(key, value)
            }
        }
    }

    @inlinable
    mutating func unlink(_ index: Int) {
        let (newer, older) = (slots[index].newer, slots[index].older)
        if let newer { slots[newer].older = older } else { newest = older }
        if let older { slots[older].newer = newer } else { oldest = newer }
        slots[index].newer = nil
        slots[index].older = nil
    }

    @inlinable
    mutating func pushNewest(_ index: Int) {
        slots[index].older = newest
        slots[index].newer = nil
        if let newest { slots[newest].newer = index } else { oldest = index }
        newest = index
    }
}
