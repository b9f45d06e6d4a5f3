import Foundation
import Synchronization

/// Who may use the chat page's server, decided for each request before anything else happens.
///
/// - The address printed for the user carries a one-time **link token** in its fragment (`/#token=…`), which the
///   browser never sends to a server. The page trades it, once and within ``linkLifetime`` of the server's start,
///   for the **session secret** (`POST /api/session`) and keeps that in its session storage.
/// - Every API request needs `Authorization: Bearer SECRET`. No cookie is ever set: cookies are scoped by host, not
///   port, so every other server on 127.0.0.1 that the browser visits would receive one. A page of another origin
///   cannot send the header without a CORS preflight, which this server never grants.
/// - The page itself (`/`, its script and style) holds no secret and is served to anyone who names the server's host,
///   so a browser opened through a local file (a cross-site navigation) reaches it.
/// - The `Host` must name the server as it was bound (DNS rebinding gets nothing), and an `Origin` must be the
///   page's own.
///
/// ```swift
/// let access = WebAccess(host: "127.0.0.1")
/// print("open http://127.0.0.1:\(port)/#token=\(access.linkToken)")
/// ```
public final class WebAccess: Sendable {
  /// What to do with a request.
  public enum Verdict: Sendable, Equatable {
    /// Serve it.
    case allow
    /// Refuse it with this status and message.
    case refuse(status: Int, message: String)
  }

  /// The paths served without the secret: the page, its script, its style and its icon.
  public static let publicPaths: Set<String> = ["/", "/app.js", "/app.css", "/favicon.ico"]
  /// The path where the page trades the link token for the session secret.
  public static let sessionPath = "/api/session"

  /// The one-time token of the printed address.
  public let linkToken: String
  /// The secret every API request carries as a bearer token.
  public let sessionSecret: String
  /// How long after ``init(host:linkToken:sessionSecret:linkLifetime:issuedAt:)`` the link can be used.
  public let linkLifetime: Duration
  /// The host names the page may be reached by (without the port): the loopback names and the bound host.
  public let hostNames: Set<String>
  /// The host the server is bound to, as a URL names it.
  public let host: String
  private let issued: ContinuousClock.Instant
  private let linkUsed = Atomic<Bool>(false)

  /// Makes the access rules of a server bound to `host`, with fresh random tokens unless given; the link works once,
  /// for `linkLifetime` from `issuedAt`.
  public init(
    host: String, linkToken: String = WebAccess.randomToken(), sessionSecret: String = WebAccess.randomToken(),
    linkLifetime: Duration = .seconds(300), issuedAt: ContinuousClock.Instant = .now
  ) {
    self.linkToken = linkToken
    self.sessionSecret = sessionSecret
    self.linkLifetime = linkLifetime
    self.issued = issuedAt
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

  /// Decides a request: its method, path, headers (lowercased names) and the port the server listens on.
  public func check(method: String, path: String, headers: [String: String], port: Int) -> Verdict {
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
    let isPublic = ["GET", "HEAD"].contains(method) && Self.publicPaths.contains(path)
    // A page of another site may link to the page (a browser opened through a local file navigates "cross-site"),
    // but not use what is behind it.
    if headers["sec-fetch-site"] == "cross-site", !isPublic {
      return .refuse(status: 403, message: "requests from other sites are refused")
    }
    if isPublic { return .allow }
    if path == Self.sessionPath {
      // Only the page's own script trades the link: a POST from its origin.
      guard method == "POST", origin != nil else {
        return .refuse(status: 403, message: "the link is traded for a session by the page itself")
      }
      return .allow
    }
    guard isAuthorized(headers) else {
      return .refuse(
        status: 401, message: "this page's session has ended or never began: open the address toolhost printed")
    }
    return .allow
  }

  /// Whether `headers` (lowercased names) carry the session secret as a bearer token.
  public func isAuthorized(_ headers: [String: String]) -> Bool {
    guard let value = headers["authorization"] else { return false }
    let parts = value.split(separator: " ", maxSplits: 1)
    return parts.count == 2 && parts[0].lowercased() == "bearer" && Self.same(String(parts[1]), sessionSecret)
  }

  /// Trades the printed link's token for the session secret: once, and only within ``linkLifetime``.
  ///
  /// - Returns: the session secret, or the refusal (status and message) to answer with.
  public func redeem(link given: String, now: ContinuousClock.Instant = .now) -> Result<String, Refusal> {
    guard Self.same(given, linkToken) else {
      return .failure(Refusal(status: 401, message: "this address is not this server's: open the one toolhost printed"))
    }
    guard now - issued <= linkLifetime else {
      return .failure(
        Refusal(
          status: 401,
          message: "this address worked for \(lifetimeText) after toolhost "
            + "printed it and has expired: stop toolhost chat --web (Ctrl-C) and run it again for a new one"))
    }
    guard !linkUsed.exchange(true, ordering: .acquiringAndReleasing) else {
      return .failure(
        Refusal(
          status: 401,
          message: "this address works once and was used already: a page that has it open can duplicate its tab; "
            + "else run toolhost chat --web again for a new one"))
    }
    return .success(sessionSecret)
  }

  /// ``linkLifetime`` for people: "5 minutes", "90 seconds".
  var lifetimeText: String {
    let seconds = linkLifetime.components.seconds
    return seconds % 60 == 0 && seconds >= 120 ? "\(seconds / 60) minutes" : "\(seconds) seconds"
  }

  /// Why a request was refused: the HTTP status and a message for the user.
  public struct Refusal: Error, Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// What went wrong and what to do.
    public var message: String
  }

  /// Compares two secrets in time that does not depend on where they differ.
  static func same(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }
}
