#if Hummingbird
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The JavaScript client (`Resources/stillwater-live.js`), read once and served with a validator.
///
/// It is served with `Cache-Control: no-cache` and an `ETag` (from the file's SHA-256): a browser keeps
/// its copy and asks each time whether it is still current, so a new version of the package reaches
/// pages at once, and an unchanged file costs a `304 Not Modified` without a body.
enum LiveScript {
    static let file: (body: ByteBuffer, etag: String)? = {
        guard let url = Bundle.module.url(forResource: "stillwater-live", withExtension: "js", subdirectory: "Resources"),
              let data = try? Data(contentsOf: url)
        else { return nil }
        let digest = SHA256.hash(data: data).prefix(12).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return (ByteBuffer(bytes: data), "\"" + digest + "\"")
    }()

    /// The answer to a GET of the script: `304` when `ifNoneMatch` names the current version.
    static func response(ifNoneMatch: String?) -> Response {
        guard let file else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "stillwater-live.js is missing from the package's resources\n")))
        }
        var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: file.etag]
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "text/javascript; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.body))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
#endif
