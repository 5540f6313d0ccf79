extension IdentifierMatch {
    /// Which paired new elements stay in place: those of a longest run whose old indexes increase, read in
    /// new order. Every other paired element has to move, and no valid batch update moves fewer.
    ///
    /// Returns one flag per new element (`false` for unpaired ones).
    ///
    /// - Complexity: O(*m* log *m*) for *m* new elements, and O(*m*) when the old order mostly held
    ///   (an element that extends the longest run is placed without a search).
    @usableFromInline
    func stayingElements() -> [Bool] {
        newToOld.withUnsafeBufferPointer { Self.stayingElements(among: $0) }
    }

    /// ``stayingElements()`` for a part of `newToOld`: entries below zero are unpaired.
    @usableFromInline
    static func stayingElements(among sources: UnsafeBufferPointer<Int>) -> [Bool] {
        let count = sources.count
        var stays = [Bool](repeating: false, count: count)
        guard count > 0 else { return stays }
        // Patience sorting, in one scratch buffer of three parts: tailValues[k] is the smallest old index
        // that ends an increasing run of k + 1 elements so far, tailPositions[k] the position of that
        // element; previous[p] links the element at p to the one before it in its run.
        let scratch = UnsafeMutableBufferPointer<Int>.allocate(capacity: 3 * count)
        defer { scratch.deallocate() }
        let tailValues = scratch.baseAddress!
        let tailPositions = tailValues + count
        let previous = tailPositions + count
        var runs = 0
        for position in 0..<count {
            let value = sources[position]
            guard value >= 0 else { continue }
            var slot = runs
            if runs > 0, value < tailValues[runs - 1] {
                // Branch-free binary search for the first tail above `value`.
                var low = 0, length = runs
                while length > 1 {
                    let half = length / 2
                    low = tailValues[low + half - 1] < value ? low + half : low
                    length -= half
                }
                slot = tailValues[low] < value ? low + 1 : low
            } else {
                runs += 1
            }
            previous[position] = slot > 0 ? tailPositions[slot - 1] : -1
            tailValues[slot] = value
            tailPositions[slot] = position
        }
        stays.withUnsafeMutableBufferPointer { stays in
            var position = runs > 0 ? tailPositions[runs - 1] : -1
            while position >= 0 {
                stays[position] = true
                position = previous[position]
            }
        }
        return stays
    }
}
