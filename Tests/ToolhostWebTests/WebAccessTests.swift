/// Who may use the chat page's server (``WebAccess``): the one-time, expiring link traded for the session secret,
/// the bearer on every API request and never a cookie, the Host and Origin checks, and the page itself for anyone.
import Testing
import ToolhostWeb

@Suite("chat page: access")
struct WebAccessTests {
  let start = ContinuousClock.now
  let access: WebAccess
  let port = 8123
  let bearer = ["authorization": "Bearer secret"]

  init() {
    access = WebAccess(
      host: "127.0.0.1", linkToken: "link", sessionSecret: "secret", linkLifetime: .seconds(300), issuedAt: start)
  }

  func check(_ method: String = "GET", _ path: String = "/api/state", _ headers: [String: String] = [:])
    -> WebAccess.Verdict
  {
    var all = ["host": "127.0.0.1:8123"]
    all.merge(headers) { $1 }
    return access.check(method: method, path: path, headers: all, port: port)
  }

  func check(_ headers: [String: String]) -> WebAccess.Verdict { check("GET", "/api/state", headers) }

  func status(_ verdict: WebAccess.Verdict) -> Int? {
    if case .refuse(let status, _) = verdict { return status }
    return nil
  }

  @Test func theLinkIsTradedOnceForTheSecret() {
    guard case .failure(let wrong) = access.redeem(link: "wrong", now: start) else {
      Issue.record("a wrong link was traded")
      return
    }
    #expect(wrong.status == 401)
    #expect(access.redeem(link: "link", now: start + .seconds(10)) == .success("secret"))
    guard case .failure(let again) = access.redeem(link: "link", now: start + .seconds(11)) else {
      Issue.record("the link worked twice")
      return
    }
    #expect(again.status == 401 && again.message.contains("works once"), "\(again.message)")
  }

  @Test func theLinkExpires() {
    guard case .failure(let late) = access.redeem(link: "link", now: start + .seconds(301)) else {
      Issue.record("the link worked after its lifetime")
      return
    }
    #expect(late.message.contains("5 minutes") && late.message.contains("run it again"), "\(late.message)")
    // Expiry does not use the link up: it is refused the same way later.
    #expect(access.redeem(link: "link", now: start + .seconds(302)) != .success("secret"))
  }

  @Test func theTradeIsThePagesOwnPost() {
    let origin = ["origin": "http://127.0.0.1:8123"]
    #expect(check("POST", WebAccess.sessionPath, origin) == .allow)
    #expect(status(check("GET", WebAccess.sessionPath, origin)) == 403)
    #expect(status(check("POST", WebAccess.sessionPath)) == 403)
    #expect(status(check("POST", WebAccess.sessionPath, ["origin": "http://127.0.0.1:9999"])) == 403)
  }

  @Test func everyAPIRequestNeedsTheBearerAndNoCookieCounts() {
    #expect(status(check()) == 401)
    #expect(status(check("GET", "/api/events")) == 401)
    // The old cookie, or any, lets nothing in: a cookie reaches every server on 127.0.0.1.
    #expect(status(check(["cookie": "toolhost-web-8123=secret"])) == 401)
    #expect(check(bearer) == .allow)
    #expect(check(["authorization": "bearer secret"]) == .allow)
    #expect(status(check(["authorization": "Bearer nope"])) == 401)
    #expect(status(check(["authorization": "Basic secret"])) == 401)
    #expect(check("POST", "/api/chats/new/messages", bearer) == .allow)
    #expect(check("DELETE", "/api/chats/1", bearer) == .allow)
  }

  @Test func thePageItselfIsForAnyoneEvenFromAnotherSite() {
    for path in ["/", "/app.js", "/app.css", "/favicon.ico"] {
      #expect(check("GET", path) == .allow, "\(path)")
    }
    // A browser opened through a local file navigates to the page "cross-site".
    #expect(check("GET", "/", ["sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"]) == .allow)
    #expect(status(check("POST", "/")) == 401)
    #expect(status(check(["sec-fetch-site": "cross-site"].merging(bearer) { $1 })) == 403)
  }

  @Test func theHostAndTheOriginMustBeThisServers() {
    for host in ["127.0.0.1:8123", "localhost:8123", "[::1]:8123"] {
      #expect(check(["host": host].merging(bearer) { $1 }) == .allow, "\(host)")
    }
    // DNS rebinding: a name that resolves here is still refused, the page included.
    for host in ["evil.example:8123", "127.0.0.1:80", "127.0.0.1", ""] {
      #expect(status(check(["host": host].merging(bearer) { $1 })) == 421, "\(host)")
      #expect(status(check("GET", "/", ["host": host])) == 421, "\(host)")
    }
    #expect(status(check(["origin": "http://evil.example"].merging(bearer) { $1 })) == 403)
    #expect(status(check(["origin": "http://127.0.0.1:9999"].merging(bearer) { $1 })) == 403)
    #expect(check(["origin": "http://127.0.0.1:8123"].merging(bearer) { $1 }) == .allow)
  }

  @Test func tokensAreRandomHex() {
    let a = WebAccess.randomToken()
    #expect(a.count == 64 && a.allSatisfy(\.isHexDigit) && a != WebAccess.randomToken())
  }
}
