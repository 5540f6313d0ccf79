import Foundation
import Stillwater

/// A view that a ``LiveHub`` sends its clients: a snapshot first, then patches that name only what
/// changed.
///
/// The view is encoded as a JSON object (with its own `Codable` conformance), and ``liveFields`` names
/// each of that object's members with the key path that reads it. A patch sends a plain field only when
/// it changed, whole, and a list field as a `ListPatch` (deletes, inserts, minimal moves and updates, with
/// the content of the elements they name), so a list of a thousand rows where one row changed costs one
/// row on the wire.
///
/// ```swift
/// import StillwaterLive
///
/// struct Row: Codable, Equatable, Sendable, Diffable {
///     var id: String
///     var text: String
///     var diffIdentifier: String { id }
/// }
/// struct BoardView: LiveView {
///     var title: String
///     var rows: [Row]
///     static let liveFields: [LiveField<BoardView>] = [.value("title", \.title), .list("rows", \.rows)]
/// }
/// let old = BoardView(title: "Groceries", rows: [Row(id: "a", text: "milk")])
/// var new = old
/// new.rows.append(Row(id: "b", text: "eggs"))
/// print(try LiveViewPatch(from: old, to: new).json)
/// // Prints "{\"lists\":{\"rows\":{\"changes\":{\"inserts\":[1]},\"elements\":[{\"id\":\"b\",\"text\":\"eggs\"}]}}}"
/// ```
///
/// The hub checks once, when it opens, that every member of the encoded view is one of ``liveFields``
/// (a member left out would never reach a client after the snapshot), and stops the program with a
/// message naming it otherwise.
///
/// A view whose value cannot be encoded never stops the hub. JSON has no number for NaN or infinity,
/// so a `Double.nan` or `.infinity` in a view is refused, as is a view whose `Encodable` conformance
/// throws: each client that needs that view (its snapshot, or a patch that carries the member) gets an
/// error frame `view_unavailable` saying where, and its connection is closed with
/// ``LiveCloseCode/serverError`` (1011). The hub, its log and its other clients go on; a client that
/// reconnects once a later view encodes is served as usual. To send such numbers, encode them yourself
/// (as `null` or a string, say) in the member's type.
public protocol LiveView: Codable, Equatable, Sendable {
    /// The members of the view's JSON object, each with its name (the key its `Codable` conformance
    /// writes) and the key path that reads it.
    static var liveFields: [LiveField<Self>] { get }
}

/// One member of a ``LiveView``'s JSON object: a plain value, sent whole when it changed, or a list,
/// sent as a `ListPatch`.
public struct LiveField<View>: Sendable {
    /// The member's key in the view's JSON object.
    public let name: String
    /// Whether the member is a list sent as a `ListPatch` (else it is sent whole when it changed).
    public let isList: Bool
    /// The JSON text of the change from the first view to the second, or nil when the member is equal.
    let change: @Sendable (View, View) throws -> String?
    /// Reads the member's change from a patch frame's `set` (a plain field: the new value) or `lists`
    /// (a list: its `ListPatch`), as a change to apply to a view: what a ``LiveClient`` uses.
    let read: @Sendable (KeyedDecodingContainer<AnyKey>, AnyKey) throws -> LiveFieldChange<View>

    /// A member sent whole whenever it changed (compared with `==`).
    ///
    /// - Parameters:
    ///   - name: The key the view's `Codable` conformance writes for it.
    ///   - keyPath: Where the view holds it.
    public static func value<Value: Codable & Equatable & Sendable>(
        _ name: String, _ keyPath: WritableKeyPath<View, Value> & Sendable
    ) -> LiveField {
        LiveField(name: name, isList: false) { old, new in
            let value = new[keyPath: keyPath]
            return old[keyPath: keyPath] == value ? nil : try LiveJSON.text(of: value)
        } read: { container, key in
            let value = try container.decode(Value.self, forKey: key)
            return LiveFieldChange { view in view[keyPath: keyPath] = value }
        }
    }

    /// A list sent as a `ListPatch` whenever it changed: the indexes that changed and the content of the
    /// elements they name, matched by their `diffIdentifier`.
    ///
    /// - Complexity: O(*n* + *m*) per patch for lists of *n* and *m* elements (the diff of `Changeset`), and
    ///   the encoding of the elements the patch names.
    ///
    /// - Parameters:
    ///   - name: The key the view's `Codable` conformance writes for it.
    ///   - keyPath: Where the view holds it.
    public static func list<Element: Codable & Diffable & Equatable & Sendable>(
        _ name: String, _ keyPath: WritableKeyPath<View, [Element]> & Sendable
    ) -> LiveField {
        LiveField(name: name, isList: true) { old, new in
            let oldList = old[keyPath: keyPath], newList = new[keyPath: keyPath]
            guard oldList != newList else { return nil }
            let patch = ListPatch(from: oldList, to: newList)
            return patch.isEmpty ? nil : try LiveJSON.text(of: patch)
        } read: { container, key in
            let patch = try container.decode(ListPatch<Element>.self, forKey: key)
            return LiveFieldChange { view in try patch.apply(to: &view[keyPath: keyPath]) }
        }
    }
}

/// One member's change read from a patch frame, to apply to a client's copy of the view.
struct LiveFieldChange<View>: Sendable {
    /// Applies the change; throws (leaving the member as it was) when a list patch does not fit.
    let apply: @Sendable (inout View) throws -> Void
}

/// What changed from one ``LiveView`` to another, as the `set` and `lists` members of a patch frame.
public struct LiveViewPatch: Sendable, Equatable {
    /// One member of a patch: a field's name and the JSON text of its change.
    public struct Member: Sendable, Equatable {
        /// The field's name (its key in the view's JSON object).
        public var name: String
        /// The new value (for a plain field) or the `ListPatch` (for a list), as JSON text.
        public var json: String
    }

    /// Each plain field that changed (the patch frame's `set`), with its new value, in the order of ``LiveView/liveFields``.
    public private(set) var values: [Member] = []
    /// Each list field that changed (the patch frame's `lists`), with its `ListPatch`, in the order of ``LiveView/liveFields``.
    public private(set) var lists: [Member] = []

    /// The changes from `old` to `new`.
    ///
    /// - Throws: What the view's members throw when encoded; an `EncodingError`'s coding path starts
    ///   with the member's name (a NaN in `reading` is an `EncodingError.invalidValue` at `reading`).
    /// - Complexity: One `==` per plain field, one diff per list field, and the encoding of what changed.
    public init<View: LiveView>(from old: View, to new: View) throws {
        for field in View.liveFields {
            let change: String?
            do {
                change = try field.change(old, new)
            } catch EncodingError.invalidValue(let value, let context) {
                // The member is encoded on its own: put its name in front of the path, as the whole view's
                // encoding would have it.
                let path = [AnyKey(field.name) as any CodingKey] + context.codingPath
                throw EncodingError.invalidValue(value, EncodingError.Context(
                    codingPath: path, debugDescription: context.debugDescription, underlyingError: context.underlyingError))
            }
            guard let json = change else { continue }
            if field.isList { lists.append(Member(name: field.name, json: json)) } else { values.append(Member(name: field.name, json: json)) }
        }
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { values.isEmpty && lists.isEmpty }

    /// The patch as a JSON object: `{"set":{…},"lists":{…}}`, each member left out when it is empty
    /// (`{}` when nothing changed).
    public var json: String {
        var writer = LiveJSONWriter()
        writer.raw("{")
        writeMembers(to: &writer, first: true)
        writer.raw("}")
        return writer.text
    }

    /// Writes `"set":{…}` and `"lists":{…}` (the non-empty ones), with a comma before the first unless
    /// `first`.
    func writeMembers(to writer: inout LiveJSONWriter, first: Bool) {
        var first = first
        for (key, members) in [("set", values), ("lists", lists)] where !members.isEmpty {
            if !first { writer.raw(",") }
            first = false
            writer.string(key)
            writer.raw(":{")
            for (index, member) in members.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(member.name)
                writer.raw(":")
                writer.raw(member.json)
            }
            writer.raw("}")
        }
    }
}

extension LiveView {
    /// Checks, when a hub opens, that this view can be sent: it encodes, as a JSON object, and every
    /// member of that object is one of ``liveFields`` (a member left out would never reach a client
    /// after the snapshot).
    ///
    /// - Throws: ``LiveHubError`` when the view does not encode (a NaN or an infinity in it, an encoder
    ///   that throws) or does not encode as a JSON object; the message says where.
    /// - Precondition: ``liveFields`` names no member twice and leaves none out: the type is wrong, not
    ///   the value, so the program stops with the member's name.
    func validateLiveFields() throws(LiveHubError) {
        let names = Self.liveFields.map(\.name)
        precondition(Set(names).count == names.count, "\(Self.self).liveFields names a member twice: \(names)")
        let data: Data
        do {
            data = try LiveJSON.data(of: self)
        } catch {
            throw LiveHubError("\(Self.self) cannot be sent to clients: \(LiveJSON.describe(encoding: error)) (\(error))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LiveHubError("\(Self.self) must encode as a JSON object (a keyed container) to be a LiveView")
        }
        let missing = Set(object.keys).subtracting(names).sorted()
        precondition(missing.isEmpty, """
            \(Self.self).liveFields leaves out \(missing): add a .value or .list field for each member the \
            view encodes, or clients never see it change
            """)
    }

    /// The check ``LiveHub`` runs as it opens: the programming errors (a member left out of
    /// ``liveFields`` or named twice) stop the program; a view that encodes but not as a JSON object is
    /// thrown (the type can never be sent); a view that does not encode now (a NaN in this state) is left
    /// to the connections, which are answered `view_unavailable` and closed (1011) until a view encodes,
    /// so a stored state with a bad value does not keep the server from starting.
    func checkLiveFields() throws(LiveHubError) {
        guard (try? LiveJSON.data(of: self)) != nil else { return }
        try validateLiveFields()
    }
}
