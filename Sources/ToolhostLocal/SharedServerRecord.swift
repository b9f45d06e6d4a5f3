import Foundation

/// Where shared model servers are recorded and how long they stay up without requests.
public struct SharedServerConfiguration: Sendable, Equatable {
  /// The folder holding one state file and one lock file per model (the installation's `run/`, made 0700).
  public var runDirectory: String
  /// How long a server stays up with no request before it stops by itself. Default 5 minutes.
  public var keepAlive: Duration

  /// Makes a configuration.
  public init(runDirectory: String, keepAlive: Duration = .seconds(300)) {
    self.runDirectory = runDirectory
    self.keepAlive = keepAlive
  }

  /// Reads a keep-alive time: `300`, `90s`, `5m`, `1h` or `1h30m`.
  ///
  /// - Returns: `nil` when `text` is not a duration of at least one second.
  public static func parseKeepAlive(_ text: String) -> Duration? {
    let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
    if let seconds = Int(trimmed) { return seconds >= 1 ? .seconds(seconds) : nil }
    var total = 0
    var number = ""
    var sawUnit = false
    for character in trimmed {
      if character.isASCII, character.isNumber {
        number.append(character)
        continue
      }
      guard let n = Int(number) else { return nil }
      switch character {
      case "h": total += n * 3600
      case "m": total += n * 60
      case "s": total += n
      default: return nil
      }
      number = ""
      sawUnit = true
    }
    guard number.isEmpty, sawUnit, total >= 1 else { return nil }
    return .seconds(total)
  }
}

/// What the state file of a running shared server says.
public struct SharedServerRecord: Sendable, Equatable, Codable {
  /// The server's process id.
  public var pid: Int32
  /// Its port on 127.0.0.1.
  public var port: Int
  /// The bearer key every request must carry (the server refuses requests without it).
  public var key: String
  /// The GGUF model it serves.
  public var model: String
  /// Seconds without a request after which it stops by itself.
  public var keepAliveSeconds: Int
  /// When it was started (seconds since 1970).
  public var started: Double
}
