public import Foundation
import ToolhostJSON

// `Decimal` as a generated value (FoundationModels 27): a JSON number, read through the number's shortest decimal
// text, so that 0.1 is 0.1 and not the nearest binary fraction, with the numeric guides. The number was parsed as a
// double first, so a figure of more than about 17 significant digits keeps only those (both ways).

extension Decimal: Generable {
  /// `{"type": "number"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Decimal", ["type": "number"]) }

  /// The decimal of number content.
  public init(_ content: GeneratedContent) throws {
    guard case .number = content.kind,
      let value = Decimal(string: content.jsonString, locale: Locale(identifier: "en_US_POSIX"))
    else {
      throw GeneratedContentError(path: "", message: "expected a number, found \(content.kindName)")
    }
    self = value
  }

  /// Number content.
  public var generatedContent: GeneratedContent {
    GeneratedContent(kind: .number(NSDecimalNumber(decimal: self).doubleValue))
  }
}

extension GenerationGuide where Value == Decimal {
  /// At least `value`.
  public static func minimum(_ value: Decimal) -> GenerationGuide<Decimal> { .init(["minimum": Self.number(value)]) }
  /// At most `value`.
  public static func maximum(_ value: Decimal) -> GenerationGuide<Decimal> { .init(["maximum": Self.number(value)]) }
  /// Within the range (bounds included).
  public static func range(_ range: ClosedRange<Decimal>) -> GenerationGuide<Decimal> {
    .init(["minimum": Self.number(range.lowerBound), "maximum": Self.number(range.upperBound)])
  }

  /// A bound as JSON Schema writes it: an integer when it is whole, else the nearest double.
  private static func number(_ value: Decimal) -> JSONValue {
    let double = NSDecimalNumber(decimal: value).doubleValue
    if double.rounded() == double, let whole = Int64(exactly: double) { return .integer(whole) }
    return .real(double)
  }
}
