import Foundation
import Synchronization

/// Who may use the chat page's server, decided for each request before anything else happens.
///
/// - The address printed for the user carries a one-time **link token**: the first request with it is answered with
///   a redirect to the page and an HttpOnly, SameSite=Strict cookie holding the **session secret**; the link then
///   works no more.
/// - Every other request needs that cookie, or `Authorization: Bearer SECRET` (a program that is not a browser).
/// - The `Host` must name the server as it was bound (DNS rebinding gets nothing), an `Origin` must be the page's
///   own, and a request that changes something needs one of them to be there: the page's `Origin`, or the bearer.
public final class WebAccess: Sendable {
  /// What to do with a request.
  public enum Verdict: Sendable, Equatable {
    /// Serve it.
    case allow
    /// Redirect to `/`, setting this cookie (a whole `Set-Cookie` value) when the link was used now (`nil` when the
    /// browser has the cookie already).
    case enter(setCookie: String?)
    /// Refuse it with this status and message.
    case refuse(status: Int, message: String)
  }

  /// The one-time token of the printed address.
  public let linkToken: String
  /// The secret the cookie (or the bearer) carries.
  public let sessionSecret: String
  /// The host names the page may be reached by (without the port): the loopback names and the bound host.
  public let hostNames: Set<String>
  /// The host the server is bound to, as a URL names it.
  public let host: String
  private let linkUsed = Atomic<Bool>(false)

  /// Makes the access rules of a server bound to `host`, with fresh random tokens unless given.
  public init(
    host: String, linkToken: String = WebAccess.randomToken(), sessionSecret: String = WebAccess.randomToken()
  ) {
    self.linkToken = linkToken
    self.sessionSecret = sessionSecret
    var names: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
    self.host = host.contains(":") && !host.hasPrefix("[") ? "[\(host.lowercased())]" : host.lowercased()
    names.insert(self.host)
    hostNames = names
  }

  /// 32 random bytes in hex.
  public static func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
  }

  /// The cookie's name: one per port, since browsers share cookies between the ports of a host.
  public func cookieName(port: Int) -> String { "toolhost-web-\(port)" }

  /// Decides a request: its method, path, the `token` of its query (if any), its headers (lowercased names) and the
  /// port the server listens on.
  public func check(method: String, path: String, linkToken given: String?, headers: [String: String], port: Int)
    -> Verdict
  {
    let hostHeader = headers["host"]?.lowercased() ?? ""
    guard hostNames.contains(where: { hostHeader == "\($0):\(port)" }) else {
      return .refuse(
        status: 421,
        message: "this server answers only at http://\(host):\(port)/ (the request named the host \"\(hostHeader)\")")
    }
    let origin = headers["origin"]?.lowercased()
    if let origin, !hostNames.contains(where: { origin == "http://\($0):\(port)" }) {
      return .refuse(status: 403, message: "requests from other pages are refused (origin \(origin))")
    }
    if headers["sec-fetch-site"] == "cross-site" {
      return .refuse(status: 403, message: "requests from other sites are refused")
    }
    let bearer = headers["authorization"].flatMap { value -> String? in
      let parts = value.split(separator: " ", maxSplits: 1)
      return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
    }
    let cookie = Self.cookies(headers["cookie"] ?? "")[cookieName(port: port)]
    let hasSession = cookie.map { Self.same($0, sessionSecret) } ?? false
    if let given, path == "/" {
      // A browser that is in already and opens the link again goes to the page.
      if hasSession { return .enter(setCookie: nil) }
      guard Self.same(given, linkToken), !linkUsed.exchange(true, ordering: .acquiringAndReleasing) else {
        return .refuse(
          status: 401,
          message: "this address works once and was used already (or is not this server's): run toolhost chat --web "
            + "again for a new one")
      }
      return .enter(
        setCookie: "\(cookieName(port: port))=\(sessionSecret); Path=/; HttpOnly; SameSite=Strict")
    }
    guard hasSession || bearer.map({ Self.same($0, sessionSecret) }) ?? false else {
      return .refuse(
        status: 401, message: "this page's session has ended or never began: open the address toolhost printed")
    }
    if !["GET", "HEAD"].contains(method), origin == nil, bearer == nil {
      return .refuse(status: 403, message: "a request that changes something needs the page's Origin header")
    }
    return .allow
  }

  /// The cookies of a `Cookie` header.
  static func cookies(_ header: String) -> [String: String] {
    var out: [String: String] = [:]
    for part in header.split(separator: ";") {
      let pair = part.split(separator: "=", maxSplits: 1)
      guard pair.count == 2 else { continue }
      out[pair[0].trimmingCharacters(in: .whitespaces)] = pair[1].trimmingCharacters(in: .whitespaces)
    }
    return out
  }

  /// Compares two secrets in time that does not depend on where they differ.
  static func same(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }
}
