extension ObservableType {
    /// Sends, for each array, the ``Changeset`` from the previous one, with both arrays.
    ///
    /// The first array of each subscription is diffed from an empty array, so its changeset inserts
    /// everything: a consumer that starts empty and applies every changeset always holds the latest array.
    ///
    /// ```swift
    /// let lists = PublishSubject<[String]>()
    /// let subscription = lists.diffed().observe { print($0.changeset) }
    /// lists.send(["a", "b"])
    /// lists.send(["b", "c"])
    /// // Prints "Changeset(inserts: [0, 1])", "Changeset(deletes: [0], inserts: [1])"
    /// ```
    ///
    /// - Complexity: One diff per array, linear in the lengths of the two arrays when their order mostly held (see
    ///   ``Changeset/init(from:to:)``).
    @inlinable
    public func diffed<Element>() -> Observable<ListDiff<Element>>
    where Value == [Element], Element: Diffable & Equatable {
        diffed(isEqual: ==)
    }

    /// Sends, for each array, the ``Changeset`` from the previous one, comparing content with `isEqual`.
    ///
    /// As ``diffed()``, for elements that are not `Equatable` or whose content is compared another way.
    ///
    /// - Parameter isEqual: Returns `true` when an element kept its content.
    @inlinable
    public func diffed<Element>(
        isEqual: @escaping (Element, Element) -> Bool
    ) -> Observable<ListDiff<Element>> where Value == [Element], Element: Diffable {
        Observable { observer in
            let previous = DelivererBox<[Element]>([])
            return self.subscribe { event in
                observer(event.map { current in
                    let old = previous.value
                    previous.value = current
                    let changeset = Changeset(from: old, to: current, isEqual: isEqual)
                    return ListDiff(old: old, new: current, changeset: changeset)
                })
            }
        }
    }
}

/// Two successive versions of a list and the ``Changeset`` between them, as ``ObservableType/diffed()``
/// sends them.
public struct ListDiff<Element> {
    /// The previous version (empty for the first).
    public var old: [Element]
    /// The latest version.
    public var new: [Element]
    /// The changeset that turns ``old`` into ``new``.
    public var changeset: Changeset

    /// The versions `old` and `new` with the changeset between them.
    @inlinable
    public init(old: [Element], new: [Element], changeset: Changeset) {
        self.old = old
        self.new = new
        self.changeset = changeset
    }
}

extension ListDiff: Equatable where Element: Equatable {}
extension ListDiff: Sendable where Element: Sendable {}
