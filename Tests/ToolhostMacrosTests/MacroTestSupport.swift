import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import ToolhostMacroExpansion

/// The macros as ToolhostGeneration declares them: `@Generable` adds the `Generable` conformance.
var generationMacros: [String: MacroSpec] {
  [
    "Generable": MacroSpec(type: GenerableMacro.self, conformances: ["Generable"]),
    "Guide": MacroSpec(type: GuideMacro.self),
    "SessionPropertyEntry": MacroSpec(type: SessionPropertyEntryMacro.self),
  ]
}

/// Expands the macros in `source` and checks the expansion and the diagnostics, recording any difference as an
/// issue at the caller.
func assertGeneration(
  _ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [], fileID: StaticString = #fileID,
  filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
) {
  assertMacroExpansion(
    source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: generationMacros,
    indentationWidth: .spaces(2),
    failureHandler: recordFailure, fileID: fileID, filePath: filePath, line: line, column: column)
}

/// Expands `@Generable` as the compiler does for a type that already declares `Generable`: with no conformances to
/// add.
func assertMacroExpansionWithoutConformance(
  _ source: String, expandedSource: String, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
  line: UInt = #line, column: UInt = #column
) {
  assertMacroExpansion(
    source, expandedSource: expandedSource,
    macroSpecs: ["Generable": MacroSpec(type: GenerableMacro.self), "Guide": MacroSpec(type: GuideMacro.self)],
    indentationWidth: .spaces(2),
    failureHandler: recordFailure, fileID: fileID, filePath: filePath, line: line, column: column)
}

/// Records a failed expansion check as an issue of the test, at the line of the check.
func recordFailure(_ failure: TestFailureSpec) {
  Issue.record(
    Comment(rawValue: failure.message),
    sourceLocation: SourceLocation(
      fileID: failure.location.fileID, filePath: failure.location.filePath, line: failure.location.line,
      column: failure.location.column))
}
