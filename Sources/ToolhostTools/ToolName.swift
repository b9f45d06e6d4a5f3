/// Tool names as toolhost offers them: 1 to 64 characters of `A-Z a-z 0-9 _ . -`.
///
/// A name that would be longer (an MCP server's own name, or its `server.tool` form) is cut to the
/// limit and ends with a hash of the whole name, so the same name always gets the same short form and two long
/// names that share a beginning stay apart.
package enum ToolName {
  /// The longest name, in characters.
  package static let maxLength = 64

  /// `name` as it is when it fits, otherwise its first 55 characters, `-` and 8 hex digits of FNV-1a (32-bit) of the
  /// whole name. `name` must already be made of the allowed characters.
  package static func fitted(_ name: String) -> String {
    guard name.utf8.count > maxLength else { return name }
    var hash: UInt32 = 0x811C_9DC5
    for byte in name.utf8 {
      hash ^= UInt32(byte)
      hash = hash &* 0x0100_0193
    }
    let digits = String(hash, radix: 16)
    let suffix = String(repeating: "0", count: 8 - digits.count) + digits
    return String(name.utf8.prefix(maxLength - 9))! + "-" + suffix
  }

  /// Whether `name` is a tool name: 1 to ``maxLength`` characters of `A-Z a-z 0-9 _ . -`.
  package static func isValid(_ name: String) -> Bool {
    (1...maxLength).contains(name.utf8.count)
      && name.utf8.allSatisfy { byte in
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x5F, 0x2E, 0x2D: true
        default: false
        }
      }
  }
}
