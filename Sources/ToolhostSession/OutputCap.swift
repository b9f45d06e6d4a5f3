/// Caps text sent to a model: keeps the head and the tail and puts a marker in the middle saying how much was cut.
public enum OutputCap {
  /// `text` shortened to at most `limit` characters of the original (plus the marker), half from the start and half
  /// from the end, and the number of characters cut (0 when it fit).
  ///
  /// The marker reads `[… toolhost cut 12345 of 40000 characters here …]` on a line of its own. A `limit` below 1
  /// counts as 1. Characters are Swift `Character`s (grapheme clusters), so nothing is split in the middle.
  public static func apply(_ text: String, limit: Int) -> (text: String, cut: Int) {
    let limit = max(1, limit)
    // Cheap exit: a string's UTF-8 length is an upper bound of its character count.
    if text.utf8.count <= limit { return (text, 0) }
    let total = text.count
    if total <= limit { return (text, 0) }
    let headCount = (limit + 1) / 2
    let tailCount = limit - headCount
    let cut = total - headCount - tailCount
    let head = text.prefix(headCount)
    let tail = text.suffix(tailCount)
    return (head + "\n" + marker(cut: cut, of: total) + "\n" + tail, cut)
  }

  /// The marker put where text was cut.
  public static func marker(cut: Int, of total: Int) -> String {
    "[… toolhost cut \(cut) of \(total) characters here …]"
  }
}
