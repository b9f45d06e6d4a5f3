import ToolhostJSON

/// A type that can be made from generated content (FoundationModels' protocol of the same name).
public protocol ConvertibleFromGeneratedContent: SendableMetatype {
  /// Makes a value from generated content.
  ///
  /// - Throws: ``GeneratedContentError`` naming where the content does not fit the type.
  init(_ content: GeneratedContent) throws
}

/// A type that can be turned into generated content (FoundationModels' protocol of the same name). Such a value is
/// also a prompt part, a part of instructions and a tool's output: as JSON, or as text when its content is a string.
public protocol ConvertibleToGeneratedContent: InstructionsRepresentable, PromptRepresentable {
  /// The value as generated content.
  var generatedContent: GeneratedContent { get }
}

/// A type a model can generate: it describes itself with a ``GenerationSchema`` and converts to and from
/// ``GeneratedContent``. Write `@Generable` on a struct or enum to derive all of it (FoundationModels' protocol).
///
/// ```swift
/// @Generable
/// struct Forecast {
///   @Guide(description: "The city, as the user wrote it")
///   var city: String
///   @Guide(description: "Days ahead", .range(1...7))
///   var days: Int
/// }
/// let schema = Forecast.generationSchema.jsonSchema   // standard JSON Schema
/// ```
public protocol Generable: ConvertibleFromGeneratedContent, ConvertibleToGeneratedContent {
  /// The type of a value still being generated: every property optional. `Self` for scalars.
  associatedtype PartiallyGenerated: ConvertibleFromGeneratedContent = Self
  /// The schema a model's output must follow.
  static var generationSchema: GenerationSchema { get }
}

extension Generable {
  /// The value as a partially generated one (whole).
  public func asPartiallyGenerated() -> PartiallyGenerated {
    if let same = self as? PartiallyGenerated { return same }
    do { return try PartiallyGenerated(generatedContent) } catch {
      // Only a hand-written PartiallyGenerated can refuse a whole value's content (the macro's takes any object).
      preconditionFailure(
        "\(Self.self).PartiallyGenerated cannot be made from a whole \(Self.self)'s content: \(error)")
    }
  }
}

/// Derives ``Generable`` for a struct or an enum: its ``GenerationSchema`` from the stored properties (or the
/// cases), `init(_: GeneratedContent)`, `generatedContent` and a `PartiallyGenerated` type for streaming.
@attached(extension, conformances: Generable, names: named(init(_:)), named(generatedContent), named(generationSchema))
@attached(member, names: named(PartiallyGenerated))
public macro Generable(description: String? = nil) =
  #externalMacro(module: "ToolhostMacros", type: "GenerableMacro")

/// Derives ``Generable`` as ``Generable(description:)`` does, the schema named `name` (its title, and the name the
/// model and ``GenerationSchema/name`` see) instead of the type's own name.
@attached(extension, conformances: Generable, names: named(init(_:)), named(generatedContent), named(generationSchema))
@attached(member, names: named(PartiallyGenerated))
public macro Generable(name: String, description: String? = nil) =
  #externalMacro(module: "ToolhostMacros", type: "GenerableMacro")

/// Describes a property of a `@Generable` type to the model, and constrains its values.
@attached(peer)
public macro Guide<T: Generable>(description: String? = nil, _ guides: GenerationGuide<T>...) =
  #externalMacro(module: "ToolhostMacros", type: "GuideMacro")

/// Describes a string property of a `@Generable` type, and constrains it to a regular expression.
@attached(peer)
public macro Guide<RegexOutput>(description: String? = nil, _ guides: Regex<RegexOutput>) =
  #externalMacro(module: "ToolhostMacros", type: "GuideMacro")

/// Describes a property of a `@Generable` type to the model.
@attached(peer)
public macro Guide(description: String) = #externalMacro(module: "ToolhostMacros", type: "GuideMacro")

// MARK: - Guides

/// A constraint on generated values of one type: a range, a count, a set of choices, a pattern
/// (FoundationModels' `GenerationGuide`). Each adds JSON Schema keywords to the property it is applied to.
public struct GenerationGuide<Value>: Sendable {
  /// The JSON Schema keywords this guide adds (`items` merges into the element schema).
  let keywords: JSONObject

  init(_ keywords: JSONObject) { self.keywords = keywords }
}

extension GenerationGuide where Value == String {
  /// Always this string.
  public static func constant(_ value: String) -> GenerationGuide<String> { .init(["const": .string(value)]) }
  /// One of these strings.
  public static func anyOf(_ values: [String]) -> GenerationGuide<String> {
    .init(["enum": .array(values.map { .string($0) })])
  }
  /// Matches a regular expression. Only inside `@Guide`, with a regex literal (`.pattern(/[A-Z]{3}/)`), whose text
  /// the macro reads; a `Regex` value has no readable source, so this guide adds no constraint. Elsewhere give the
  /// pattern's text with ``pattern(source:)``.
  public static func pattern<Output>(_ regex: Regex<Output>) -> GenerationGuide<String> { .init([:]) }
  /// Matches a regular expression written as text (ECMA-262 syntax, as JSON Schema's `pattern`). The whole string must
  /// match, as with FoundationModels' regex guides: the pattern is anchored (`^(…)$`) unless it already is, which
  /// llama.cpp's grammars also require.
  public static func pattern(source: String) -> GenerationGuide<String> {
    let anchored = source.hasPrefix("^") && source.hasSuffix("$") ? source : "^(\(source))$"
    return .init(["pattern": .string(anchored)])
  }
}

extension GenerationGuide where Value == Int {
  /// At least `value`.
  public static func minimum(_ value: Int) -> GenerationGuide<Int> { .init(["minimum": .integer(Int64(value))]) }
  /// At most `value`.
  public static func maximum(_ value: Int) -> GenerationGuide<Int> { .init(["maximum": .integer(Int64(value))]) }
  /// Within the range.
  public static func range(_ range: ClosedRange<Int>) -> GenerationGuide<Int> {
    .init(["minimum": .integer(Int64(range.lowerBound)), "maximum": .integer(Int64(range.upperBound))])
  }
}

extension GenerationGuide where Value == Double {
  /// At least `value`.
  public static func minimum(_ value: Double) -> GenerationGuide<Double> { .init(["minimum": .real(value)]) }
  /// At most `value`.
  public static func maximum(_ value: Double) -> GenerationGuide<Double> { .init(["maximum": .real(value)]) }
  /// Within the range.
  public static func range(_ range: ClosedRange<Double>) -> GenerationGuide<Double> {
    .init(["minimum": .real(range.lowerBound), "maximum": .real(range.upperBound)])
  }
}

extension GenerationGuide where Value == Float {
  /// At least `value`.
  public static func minimum(_ value: Float) -> GenerationGuide<Float> { .init(["minimum": .real(Double(value))]) }
  /// At most `value`.
  public static func maximum(_ value: Float) -> GenerationGuide<Float> { .init(["maximum": .real(Double(value))]) }
  /// Within the range.
  public static func range(_ range: ClosedRange<Float>) -> GenerationGuide<Float> {
    .init(["minimum": .real(Double(range.lowerBound)), "maximum": .real(Double(range.upperBound))])
  }
}

extension GenerationGuide {
  /// At least `count` elements.
  public static func minimumCount<Element>(_ count: Int) -> GenerationGuide<[Element]> where Value == [Element] {
    .init(["minItems": .integer(Int64(count))])
  }
  /// At most `count` elements.
  public static func maximumCount<Element>(_ count: Int) -> GenerationGuide<[Element]> where Value == [Element] {
    .init(["maxItems": .integer(Int64(count))])
  }
  /// A number of elements within the range.
  public static func count<Element>(_ range: ClosedRange<Int>) -> GenerationGuide<[Element]>
  where Value == [Element] {
    .init(["minItems": .integer(Int64(range.lowerBound)), "maxItems": .integer(Int64(range.upperBound))])
  }
  /// Exactly `count` elements.
  public static func count<Element>(_ count: Int) -> GenerationGuide<[Element]> where Value == [Element] {
    .init(["minItems": .integer(Int64(count)), "maxItems": .integer(Int64(count))])
  }
  /// Every element follows `guide`.
  public static func element<Element>(_ guide: GenerationGuide<Element>) -> GenerationGuide<[Element]>
  where Value == [Element] {
    .init(["items": .object(guide.keywords)])
  }
}

// MARK: - Standard types

extension String: Generable {
  /// `{"type": "string"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "String", ["type": "string"]) }
  /// The string of string content.
  public init(_ content: GeneratedContent) throws {
    guard case .string(let s) = content.kind else {
      throw GeneratedContentError(path: "", message: "expected a string, found \(content.kindName)")
    }
    self = s
  }
  /// String content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .string(self)) }
}

extension Bool: Generable {
  /// `{"type": "boolean"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Bool", ["type": "boolean"]) }
  /// The Boolean of Boolean content.
  public init(_ content: GeneratedContent) throws {
    guard case .bool(let b) = content.kind else {
      throw GeneratedContentError(path: "", message: "expected a Boolean, found \(content.kindName)")
    }
    self = b
  }
  /// Boolean content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .bool(self)) }
}

extension Int: Generable {
  /// `{"type": "integer"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Int", ["type": "integer"]) }
  /// The integer of a whole number.
  public init(_ content: GeneratedContent) throws {
    guard case .number(let d) = content.kind, d.rounded() == d, let i = Int(exactly: d) else {
      throw GeneratedContentError(path: "", message: "expected an integer, found \(content.jsonString.prefix(40))")
    }
    self = i
  }
  /// Number content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .number(Double(self))) }
}

extension Double: Generable {
  /// `{"type": "number"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Double", ["type": "number"]) }
  /// The number of number content.
  public init(_ content: GeneratedContent) throws {
    guard case .number(let d) = content.kind else {
      throw GeneratedContentError(path: "", message: "expected a number, found \(content.kindName)")
    }
    self = d
  }
  /// Number content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .number(self)) }
}

extension Float: Generable {
  /// `{"type": "number"}`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Float", ["type": "number"]) }
  /// The number of number content.
  public init(_ content: GeneratedContent) throws { self = Float(try Double(content)) }
  /// Number content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .number(Double(self))) }
}

extension Array: Generable where Element: Generable {
  /// The elements' partial values.
  public typealias PartiallyGenerated = [Element.PartiallyGenerated]
  /// `{"type": "array", "items": …}`.
  public static var generationSchema: GenerationSchema {
    GenerationSchema(
      primitive: "[\(Element.self)]", ["type": "array", "items": Element.generationSchema.jsonSchema])
  }
}

extension Array: ConvertibleToGeneratedContent where Element: ConvertibleToGeneratedContent {
  /// Array content.
  public var generatedContent: GeneratedContent { GeneratedContent(kind: .array(map(\.generatedContent))) }
}

extension Array: ConvertibleFromGeneratedContent where Element: ConvertibleFromGeneratedContent {
  /// The elements of array content.
  public init(_ content: GeneratedContent) throws {
    self = try content.elements().enumerated().map { i, element in
      do { return try Element(element) } catch let error as GeneratedContentError { throw error.inside("/\(i)") }
    }
  }
}

extension Optional: ConvertibleToGeneratedContent where Wrapped: ConvertibleToGeneratedContent {
  /// The wrapped value's content, or `null`.
  public var generatedContent: GeneratedContent { self?.generatedContent ?? GeneratedContent(kind: .null) }
}

extension Optional: ConvertibleFromGeneratedContent where Wrapped: ConvertibleFromGeneratedContent {
  /// `nil` for `null`, else the wrapped type's value.
  public init(_ content: GeneratedContent) throws {
    self = content.kind == .null ? nil : try Wrapped(content)
  }
}

extension GeneratedContent: Generable {
  /// Any JSON value.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "GeneratedContent", [:]) }
  /// The content itself.
  public init(_ content: GeneratedContent) throws { self = content }
  /// Itself.
  public var generatedContent: GeneratedContent { self }
}

extension Never: Generable {
  /// No value: an empty `anyOf`.
  public static var generationSchema: GenerationSchema { GenerationSchema(primitive: "Never", ["not": [:]]) }
  /// Always throws: no content is a `Never`.
  public init(_ content: GeneratedContent) throws {
    throw GeneratedContentError(path: "", message: "no value can be generated for Never")
  }
  /// Unreachable: there is no `Never` value.
  public var generatedContent: GeneratedContent { switch self {} }
}

// `@Guide(.count(3))` is type-checked before the macro sees the property's type, with the element type unknown: these
// let such a guide resolve (as FoundationModels' do), and carry the same keywords.
extension GenerationGuide where Value == [Never] {
  /// At least `count` elements.
  public static func minimumCount(_ count: Int) -> GenerationGuide<Value> {
    .init(["minItems": .integer(Int64(count))])
  }
  /// At most `count` elements.
  public static func maximumCount(_ count: Int) -> GenerationGuide<Value> {
    .init(["maxItems": .integer(Int64(count))])
  }
  /// A number of elements within the range.
  public static func count(_ range: ClosedRange<Int>) -> GenerationGuide<Value> {
    .init(["minItems": .integer(Int64(range.lowerBound)), "maxItems": .integer(Int64(range.upperBound))])
  }
  /// Exactly `count` elements.
  @_disfavoredOverload
  public static func count(_ count: Int) -> GenerationGuide<Value> {
    .init(["minItems": .integer(Int64(count)), "maxItems": .integer(Int64(count))])
  }
}
