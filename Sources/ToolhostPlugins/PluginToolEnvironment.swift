import ToolhostJSON
import ToolhostSchema
import ToolhostTools

/// What a plugin process's environment holds: the host's few variables, the ones its manifest names, and the call's
/// `TOOLHOST_*` variables.
extension PluginTool {
  /// The child's environment: PATH, HOME, LANG, LC_*, TZ and TMPDIR from the host, the names the manifest declares,
  /// and the call's TOOLHOST_* variables. Nothing else of the host's environment.
  ///
  /// Only the properties the input schema declares (top-level `properties`) become `TOOLHOST_ARG_*` variables, so
  /// an argument the schema does not check cannot reach the plugin through its environment.
  /// - Throws: ``ToolFailure/invalidArguments(_:)`` when two arguments map to one variable (`path` and `Path` both
  ///   to `TOOLHOST_ARG_PATH`): the plugin would see only one of two values, not necessarily the one validated.
  func environment(arguments: JSONValue, callID: String) throws(ToolFailure) -> [String: String] {
    var env = Self.baseEnvironment(hostEnvironment, allowed: manifest.environment)
    env["TOOLHOST_TOOL"] = name
    env["TOOLHOST_CALL_ID"] = callID
    var budget = Self.argumentVariablesBudget
    let declared = definition.inputSchema["properties"]?.objectValue
    var owners: [String: String] = [:]
    for (key, value) in arguments.objectValue ?? [:] {
      let name = "TOOLHOST_ARG_" + Self.variableName(key)
      if let other = owners[name] {
        throw .invalidArguments([
          ValidationIssue(
            instanceLocation: "/" + key, keywordLocation: "", keyword: "environment",
            message:
              "the arguments \"\(other)\" and \"\(key)\" would both become \(name); give only one of them")
        ])
      }
      owners[name] = key
      guard declared?[key] != nil else { continue }
      let text: String = if case .string(let s) = value { s } else { value.serialized() }
      let size = name.utf8.count + text.utf8.count + 2
      if text.utf8.count <= Self.argumentVariableLimit, size <= budget, !text.utf8.contains(0) {
        env[name] = text
        budget -= size
      }
    }
    return env
  }

  static let baseVariables: Set<String> = ["PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"]

  /// PATH, HOME, LANG, LANGUAGE, LC_*, TZ and TMPDIR from `host`, and the `allowed` names; PATH defaults to
  /// `/usr/local/bin:/usr/bin:/bin`.
  public static func baseEnvironment(_ host: [String: String], allowed: [String]) -> [String: String] {
    var env: [String: String] = [:]
    for (k, v) in host where baseVariables.contains(k) || k.hasPrefix("LC_") || allowed.contains(k) {
      env[k] = v
    }
    if env["PATH"] == nil { env["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
    return env
  }

  /// `searchTerm` → `SEARCH_TERM`, `max-items` → `MAX_ITEMS`: a lower-to-upper case change starts a new word, and
  /// anything that is not a letter or digit becomes `_`.
  public static func variableName(_ key: String) -> String {
    var out = ""
    var previousLower = false
    for scalar in key.unicodeScalars {
      let isUpper = scalar.properties.isUppercase
      if isUpper && previousLower { out.append("_") }
      if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
        out.append(String(scalar).uppercased())
      } else {
        out.append("_")
      }
      previousLower = scalar.properties.isLowercase || ("0"..."9").contains(scalar)
    }
    return out
  }
}
