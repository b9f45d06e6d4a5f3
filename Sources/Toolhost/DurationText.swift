extension Duration {
  /// The duration in seconds.
  package var seconds: Double {
    let c = components
    return Double(c.seconds) + Double(c.attoseconds) / 1e18
  }

  /// The duration as messages say it: `250 ms` below a second, else `5 s` or `1.5 s`.
  package var messageText: String {
    let s = seconds
    if s < 1 { return "\(Int((s * 1000).rounded())) ms" }
    if s == s.rounded() { return "\(Int(s)) s" }
    return "\((s * 10).rounded() / 10) s"
  }
}
