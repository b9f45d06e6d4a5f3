import Synchronization
public import ToolhostTools

// Session properties (FoundationModels 27): values a session keeps for its dynamic profile, its dynamic instructions
// and its tools, read and written through `@SessionProperty`, declared with `@SessionPropertyEntry`.

/// Declares a custom session property in an extension of ``SessionPropertyValues``, its initial value the default
/// (FoundationModels' macro, as SwiftUI's `@Entry`):
///
/// ```swift
/// extension SessionPropertyValues {
///   @SessionPropertyEntry var toolCallCount: Int = 0
/// }
/// ```
///
/// It makes the property read and write the session's value under a key of its own (`__Key_toolCallCount`).
@attached(accessor) @attached(peer, names: prefixed(__Key_))
public macro SessionPropertyEntry() = #externalMacro(module: "ToolhostMacros", type: "SessionPropertyEntryMacro")

/// A key of a custom session property (FoundationModels' protocol): its type and its value before anything sets it.
public protocol SessionPropertyKey: SendableMetatype {
  /// The value's type.
  associatedtype Value: Sendable
  /// The value before anything sets it.
  static var defaultValue: Value { get }
}

/// A session's properties: its history so far and custom values (FoundationModels' `SessionPropertyValues`). A
/// profile reads them through ``LanguageModelSession/SessionProperty``; hooks may change them, and the profile is
/// worked out again before the next model turn.
///
/// A property of your own is declared with ``SessionPropertyEntry()``, or by hand with a ``SessionPropertyKey``:
/// ```swift
/// extension SessionPropertyValues {
///   @SessionPropertyEntry var expertise: String = "beginner"
/// }
/// // which is the same as
/// enum Expertise: SessionPropertyKey { static let defaultValue = "beginner" }
/// extension SessionPropertyValues {
///   var expertise: String { get { self[Expertise.self] } set { self[Expertise.self] = newValue } }
/// }
/// ```
public final class SessionPropertyValues: Sendable {
  private struct State {
    var history: ArraySlice<Transcript.Entry> = []
    /// Whether someone other than the session wrote ``history`` since the session last set it.
    var historyWritten = false
    var custom: [ObjectIdentifier: any Sendable] = [:]
  }

  private let state = Mutex(State())

  /// Empty properties (toolhost's: a session makes its own).
  public init() {}

  /// The session's entries so far but its leading instructions (``Transcript/history``), the current request's among
  /// them while it runs. A hook that sets it (to compact a long chat, say) changes the session's transcript from
  /// then on; the instructions stay.
  public var history: ArraySlice<Transcript.Entry> {
    get { state.withLock { $0.history } }
    set {
      state.withLock {
        $0.history = newValue
        $0.historyWritten = true
      }
    }
  }

  /// Sets ``history`` from the session's transcript, which is not a rewrite.
  func setHistory(of transcript: Transcript) {
    state.withLock {
      $0.history = transcript.history
      $0.historyWritten = false
    }
  }

  /// The history someone other than the session wrote since the session last set it, once.
  func takeWrittenHistory() -> ArraySlice<Transcript.Entry>? {
    state.withLock {
      guard $0.historyWritten else { return nil }
      $0.historyWritten = false
      return $0.history
    }
  }

  /// A custom property's value.
  public subscript<K: SessionPropertyKey>(key: K.Type) -> K.Value {
    get { state.withLock { $0.custom[ObjectIdentifier(key)] as? K.Value } ?? K.defaultValue }
    set { state.withLock { $0.custom[ObjectIdentifier(key)] = newValue } }
  }
}

extension SessionPropertyValues {
  /// The properties of the session whose request this task runs: what a `@SessionProperty` reads first, so that a
  /// profile or tool value two sessions share reads the session at hand.
  @TaskLocal static var current: SessionPropertyValues?
}

extension LanguageModelSession {
  /// Reads (and writes) one of the session's properties: `@SessionProperty(\.history)`, in a dynamic profile, in
  /// dynamic instructions, in a modifier or in a tool. It reads the session whose request is running (its profile
  /// being worked out, its hooks and its tools); outside a request it reads the defaults, and a write is lost.
  @propertyWrapper
  public struct SessionProperty<Value> {
    let keyPath: any ReferenceWritableKeyPath<SessionPropertyValues, Value> & Sendable

    /// A property of the session (a key path literal such as `\.history`).
    public init(_ keyPath: any ReferenceWritableKeyPath<SessionPropertyValues, Value> & Sendable) {
      self.keyPath = keyPath
    }

    /// The value in the session whose request is running (the default outside one).
    public var wrappedValue: Value {
      get { (SessionPropertyValues.current ?? SessionPropertyValues())[keyPath: keyPath] }
      nonmutating set { (SessionPropertyValues.current ?? SessionPropertyValues())[keyPath: keyPath] = newValue }
    }
  }
}

extension LanguageModelSession.SessionProperty: Sendable where Value: Sendable {}

extension Tool {
  /// One of the session's properties, read from a tool a dynamic profile offers (FoundationModels' name).
  public typealias SessionProperty = LanguageModelSession.SessionProperty
}
