import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@SessionPropertyEntry`: a property of `SessionPropertyValues` read and written under a key of its own, its
/// initial value the key's default.
@Suite struct SessionPropertyEntryTests {
  @Test func aPropertyWithAnInitialValueGetsAKeyAndAccessors() {
    assertGeneration(
      """
      extension SessionPropertyValues {
        @SessionPropertyEntry
        var toolCallCount: Int = 0
      }
      """,
      expandedSource: """
        extension SessionPropertyValues {
          var toolCallCount: Int {
            get {
              self[__Key_toolCallCount.self]
            }
            set {
              self[__Key_toolCallCount.self] = newValue
            }
          }

          private struct __Key_toolCallCount: SessionPropertyKey {
            static var defaultValue: Int {
              0
            }
          }
        }
        """)
  }

  @Test func anOptionalWithoutAValueDefaultsToNil() {
    assertGeneration(
      """
      extension SessionPropertyValues {
        @SessionPropertyEntry var lastCity: String?
      }
      """,
      expandedSource: """
        extension SessionPropertyValues {
          var lastCity: String? {
            get {
              self[__Key_lastCity.self]
            }
            set {
              self[__Key_lastCity.self] = newValue
            }
          }

          private struct __Key_lastCity: SessionPropertyKey {
            static var defaultValue: String? {
              nil
            }
          }
        }
        """)
  }

  @Test func aPropertyWithoutATypeIsAnError() {
    assertGeneration(
      """
      extension SessionPropertyValues {
        @SessionPropertyEntry var count = 0
      }
      """,
      expandedSource: """
        extension SessionPropertyValues {
          var count = 0
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "session property 'count' needs a type annotation: write 'var count: Type = value'", line: 2,
          column: 3)
      ])
  }

  @Test func aNonOptionalWithoutAValueIsAnError() {
    assertGeneration(
      """
      extension SessionPropertyValues {
        @SessionPropertyEntry var city: String
      }
      """,
      expandedSource: """
        extension SessionPropertyValues {
          var city: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "session property 'city' needs an initial value, its default (only an optional defaults to nil)",
          line: 2, column: 3)
      ])
  }

  @Test func aConstantIsAnError() {
    assertGeneration(
      """
      extension SessionPropertyValues {
        @SessionPropertyEntry let limit: Int = 3
      }
      """,
      expandedSource: """
        extension SessionPropertyValues {
          let limit: Int = 3
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "@SessionPropertyEntry applies to a 'var' with one name in an extension of SessionPropertyValues",
          line: 2, column: 3)
      ])
  }
}
