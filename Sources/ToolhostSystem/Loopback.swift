/// Names of this machine's loopback interface, the one place that decides what "this machine" means for URLs and
/// origins (a token may cross plain HTTP only to it; browser pages from it may call a local server).
package enum Loopback {
  /// Whether `host` (a URL's host, with or without IPv6 brackets, any case) names the loopback interface.
  package static func isHost(_ host: String) -> Bool {
    ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
  }
}
