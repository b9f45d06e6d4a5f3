/// Who may use the chat page's server (``WebAccess``): the one-time link, the cookie and the bearer, the Host and
/// Origin checks, and a change without an Origin.
import Testing
import ToolhostWeb

@Suite("chat page: access")
struct WebAccessTests {
  let access = WebAccess(host: "127.0.0.1", linkToken: "link", sessionSecret: "secret")
  let port = 8123
  var cookie: String { "toolhost-web-8123=secret" }

  func check(
    _ method: String = "GET", _ path: String = "/api/state", link: String? = nil, _ headers: [String: String] = [:]
  ) -> WebAccess.Verdict {
    var all = ["host": "127.0.0.1:8123"]
    all.merge(headers) { $1 }
    return access.check(method: method, path: path, linkToken: link, headers: all, port: port)
  }

  func check(_ headers: [String: String]) -> WebAccess.Verdict { check("GET", "/api/state", headers) }

  func status(_ verdict: WebAccess.Verdict) -> Int? {
    if case .refuse(let status, _) = verdict { return status }
    return nil
  }

  @Test func theLinkWorksOnceAndGivesTheCookie() {
    #expect(status(check("GET", "/", link: "wrong")) == 401)
    guard case .enter(let setCookie) = check("GET", "/", link: "link") else {
      Issue.record("the link did not let the page in")
      return
    }
    #expect(setCookie?.hasPrefix("toolhost-web-8123=secret;") ?? false && setCookie?.contains("HttpOnly") ?? false)
    #expect(setCookie?.contains("SameSite=Strict") ?? false)
    #expect(status(check("GET", "/", link: "link")) == 401, "the link worked twice")
    // The browser that is in already goes to the page.
    #expect(check("GET", "/", link: "link", ["cookie": cookie]) == .enter(setCookie: nil))
  }

  @Test func everyRequestNeedsTheCookieOrTheBearer() {
    #expect(status(check()) == 401)
    #expect(status(check("GET", "/api/events")) == 401)
    #expect(status(check(["cookie": "toolhost-web-8123=wrong"])) == 401)
    // Another port's cookie is another server's.
    #expect(status(check(["cookie": "toolhost-web-9999=secret"])) == 401)
    #expect(check(["cookie": "a=b; \(cookie)"]) == .allow)
    #expect(check(["authorization": "Bearer secret"]) == .allow)
    #expect(status(check(["authorization": "Bearer nope"])) == 401)
  }

  @Test func theHostAndTheOriginMustBeThisServers() {
    for host in ["127.0.0.1:8123", "localhost:8123", "[::1]:8123"] {
      #expect(check(["host": host, "cookie": cookie]) == .allow, "\(host)")
    }
    // DNS rebinding: a name that resolves here is still refused.
    for host in ["evil.example:8123", "127.0.0.1:80", "127.0.0.1", ""] {
      #expect(status(check(["host": host, "cookie": cookie])) == 421, "\(host)")
    }
    #expect(status(check(["origin": "http://evil.example", "cookie": cookie])) == 403)
    #expect(status(check(["origin": "http://127.0.0.1:9999", "cookie": cookie])) == 403)
    #expect(status(check(["sec-fetch-site": "cross-site", "cookie": cookie])) == 403)
    #expect(check(["origin": "http://127.0.0.1:8123", "cookie": cookie]) == .allow)
  }

  @Test func aChangeNeedsThePagesOriginOrTheBearer() {
    #expect(status(check("POST", "/api/chats/new/messages", ["cookie": cookie])) == 403)
    #expect(check("POST", "/api/chats/new/messages", ["cookie": cookie, "origin": "http://127.0.0.1:8123"]) == .allow)
    #expect(check("DELETE", "/api/chats/1", ["authorization": "Bearer secret"]) == .allow)
  }

  @Test func tokensAreRandomHex() {
    let a = WebAccess.randomToken()
    #expect(a.count == 64 && a.allSatisfy(\.isHexDigit) && a != WebAccess.randomToken())
  }
}
