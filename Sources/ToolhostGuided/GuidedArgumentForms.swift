import Foundation

/// Arguments in the form their schema asks for: a time zone by IANA name, a date for a named day, a clock time as
/// 24-hour `HH:MM` (see ``GuidedToolCalls/withoutUngivenArguments(_:of:in:today:)``).
extension GuidedToolCalls {
  /// The IANA time zone whose city part is `city` ("Berlin" → `Europe/Berlin`, "new york" → `America/New_York`),
  /// or `nil`; a few common short names too ("NYC", "LA").
  static func ianaZone(forCity city: String) -> String? {
    let aliases = ["nyc": "New_York", "ny": "New_York", "la": "Los_Angeles", "sf": "Los_Angeles", "dc": "New_York"]
    let key = city.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: " ", with: "_")
    let wanted = (aliases[key] ?? key).lowercased()
    if let exact = TimeZone.knownTimeZoneIdentifiers.first(where: { $0.lowercased() == wanted }) { return exact }
    return TimeZone.knownTimeZoneIdentifiers.first { $0.split(separator: "/").last?.lowercased() == wanted }
  }

  /// The date (`yyyy-MM-dd`) of the one day `conversation` names relative to `today`: "today", "tomorrow", or a
  /// weekday (the next one after today, in English, French, German, Spanish or Italian); `nil` when it names none
  /// or several.
  static func namedDay(in conversation: GroundingText, today: Date) -> String? {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone.current
    var offsets: Set<Int> = []
    let words = conversation.words.map(String.init)
    if words.contains(where: ["today", "tonight", "aujourd", "heute", "hoy", "oggi"].contains) { offsets.insert(0) }
    if words.contains(where: ["tomorrow", "demain", "morgen", "mañana", "domani"].contains) { offsets.insert(1) }
    let weekday = calendar.component(.weekday, from: today)  // 1 = Sunday
    for (index, names) in GroundingVocabulary.weekdays.enumerated() where words.contains(where: names.contains) {
      let offset = (index + 1 - weekday + 7) % 7
      offsets.insert(offset == 0 ? 7 : offset)
    }
    guard offsets.count == 1, let offset = offsets.first,
      let day = calendar.date(byAdding: .day, value: offset, to: today)
    else { return nil }
    let parts = calendar.dateComponents([.year, .month, .day], from: day)
    guard let year = parts.year, let month = parts.month, let date = parts.day else { return nil }
    return String(format: "%04d-%02d-%02d", year, month, date)
  }

  static func isISODate(_ text: String) -> Bool {
    let parts = text.prefix(10).split(separator: "-")
    return parts.count == 3 && parts[0].count == 4 && parts.allSatisfy { $0.allSatisfy(\.isNumber) }
  }

  /// `text` as the 24-hour `HH:MM` a schema asks for, when it is a clock time in another form: "8:00 AM" → `08:00`,
  /// "8 pm" → `20:00`, "12 a.m." → `00:00`, "8:30" → `08:30`; `nil` for anything else, a bare number included, and
  /// for a time already so written.
  static func twentyFourHourTime(_ text: String) -> String? {
    var body = text.lowercased().replacingOccurrences(of: ".", with: "").trimmingCharacters(in: .whitespaces)
    var meridiem: String?
    for suffix in ["am", "pm"] where body.hasSuffix(suffix) {
      meridiem = suffix
      body = String(body.dropLast(2)).trimmingCharacters(in: .whitespaces)
    }
    let parts = body.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), (1...2).contains(parts[0].count), let hour = Int(parts[0]) else { return nil }
    guard parts.count == 1 || parts[1].count == 2, let minute = parts.count == 2 ? Int(parts[1]) : 0,
      (0..<60).contains(minute)
    else { return nil }
    let hours: Int
    if let meridiem {
      guard (1...12).contains(hour) else { return nil }
      hours = hour % 12 + (meridiem == "pm" ? 12 : 0)
    } else {
      guard parts.count == 2, (0..<24).contains(hour) else { return nil }
      hours = hour
    }
    let time = String(format: "%02d:%02d", hours, minute)
    return time == text ? nil : time
  }
}
