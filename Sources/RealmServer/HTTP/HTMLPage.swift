import HTTPTypes
import Hummingbird

/// The few pages a person opens from a mail (a password reset, an address confirmation): plain
/// HTML, every value escaped, no script, and a Content-Security-Policy that allows none.
enum HTMLPage {
    static func response(_ status: HTTPResponse.Status = .ok, title: String, _ body: String) -> Response {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"></head>
            <body><h1>\(escape(title))</h1>
            \(body)
            </body></html>
            """
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
                .cacheControl: "no-store", .referrerPolicy: "no-referrer",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html + "\n")))
    }

    /// `text` safe anywhere in HTML text or a quoted attribute. Scalar by scalar, not character by
    /// character: a quote followed by a combining mark is one Swift `Character`, and a browser still
    /// reads the quote.
    static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(s)
            }
        }
        return String(out)
    }

    /// A paragraph of text.
    static func paragraph(_ text: String) -> String { "<p>\(escape(text))</p>" }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
}
