import Foundation

extension String {
  /// The text on one line, for lists and summaries: each line trimmed, empty lines left out, the rest joined with
  /// ` ⏎ `.
  package var oneLine: String {
    split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
      .joined(separator: " ⏎ ")
  }

  /// The text cut to at most `width` characters, ending in `…` when cut.
  package func cut(to width: Int) -> String {
    count <= width ? self : String(prefix(Swift.max(1, width - 1))) + "…"
  }
}
