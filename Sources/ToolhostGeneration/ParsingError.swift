public import Foundation

extension GeneratedContent {
  /// A model's output that could not be made into the type or schema asked for (FoundationModels 27's error for
  /// what 26 called a decoding failure): the text as the model wrote it, and why it does not fit.
  ///
  /// ```swift
  /// do {
  ///   let trip = try await session.respond(to: "Plan a day in Lisbon", generating: Trip.self)
  /// } catch let error as GeneratedContent.ParsingError {
  ///   print(error.debugDescription, error.rawContent)
  /// }
  /// ```
  public struct ParsingError: LocalizedError, CustomDebugStringConvertible, Sendable {
    /// The output as the model wrote it.
    public var rawContent: String
    /// What the conversion failed with, when it threw (toolhost's carries the path and the expected type).
    public var underlyingError: (any Error & Sendable)?
    /// What went wrong and what to do.
    public var debugDescription: String

    /// Makes a parsing error.
    public init(rawContent: String, underlyingError: (any Error & Sendable)? = nil, debugDescription: String) {
      self.rawContent = rawContent
      self.underlyingError = underlyingError
      self.debugDescription = debugDescription
    }

    /// ``debugDescription``.
    public var errorDescription: String? { debugDescription }
  }
}
