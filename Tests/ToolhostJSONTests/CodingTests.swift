import Foundation
import Testing
import ToolhostJSON

// MARK: - Types to code

enum Access: String, Codable, Equatable {
  case read, write, execute
}

enum Priority: Int, Codable, Equatable {
  case low = 1
  case high = 9
}

struct Limits: Codable, Equatable {
  var timeoutSeconds: Double
  var memoryMB: Int
  var retries: UInt8
}

struct Manifest: Codable, Equatable {
  var name: String
  var version: Int
  var weight: Double
  var tags: [String]
  var limits: Limits
  var access: [Access]
  var priority: Priority
  var note: String?
  var env: [String: String]
  var matrix: [[Int]]
  var created: Date
  var fallback: Limits?
}

let sampleManifest = Manifest(
  name: "grep", version: 3, weight: 0.25, tags: ["search", "text"],
  limits: Limits(timeoutSeconds: 30, memoryMB: 512, retries: 2), access: [.read, .execute],
  priority: .high,
  note: nil, env: ["LANG": "C"], matrix: [[1, 2], [], [3]],
  created: Date(timeIntervalSinceReferenceDate: 800_000_000.5), fallback: nil)

/// The context and kind of a `DecodingError`.
func describe(_ error: any Error) -> (kind: String, path: [String])? {
  guard let error = error as? DecodingError else { return nil }
  switch error {
  case .typeMismatch(_, let c): return ("typeMismatch", c.codingPath.map(\.stringValue))
  case .valueNotFound(_, let c): return ("valueNotFound", c.codingPath.map(\.stringValue))
  case .keyNotFound(let k, let c):
    return ("keyNotFound", c.codingPath.map(\.stringValue) + [k.stringValue])
  case .dataCorrupted(let c): return ("dataCorrupted", c.codingPath.map(\.stringValue))
  @unknown default: return nil
  }
}

/// The kind and path of the `DecodingError` that decoding `T` from `value` throws.
func decodingFailure<T: Decodable>(_ type: T.Type, _ value: JSONValue) -> (
  kind: String, path: [String]
)? {
  do {
    _ = try value.decode(type)
    return nil
  } catch {
    return describe(error)
  }
}

/// The coding path of the `EncodingError.invalidValue` that encoding `value` throws.
func encodingFailurePath(_ value: some Encodable) -> [String]? {
  do {
    _ = try JSONValue(encoding: value)
    return nil
  } catch EncodingError.invalidValue(_, let context) {
    return context.codingPath.map(\.stringValue)
  } catch {
    return nil
  }
}

// MARK: - Round trips

@Suite("Codable bridging")
struct CodingTests {
  @Test("a nested struct encodes in declaration order, omits nil optionals, and round-trips")
  func manifestRoundTrip() throws {
    let value = try JSONValue(encoding: sampleManifest)
    #expect(
      value.objectValue?.keys == [
        "name", "version", "weight", "tags", "limits", "access", "priority", "env", "matrix",
        "created",
      ])
    #expect(value["version"] == .integer(3))
    #expect(value["weight"] == .real(0.25))
    #expect(value["limits"] == ["timeoutSeconds": 30.0, "memoryMB": 512, "retries": 2])
    #expect(value["access"] == ["read", "execute"])
    #expect(value["priority"] == .integer(9))
    #expect(value["created"] == .real(800_000_000.5))  // Date's default: seconds since 2001.
    #expect(try value.decode(Manifest.self) == sampleManifest)

    // Through text too.
    let text = try value.serialized(.compact)
    #expect(text.contains(#""limits":{"timeoutSeconds":30.0,"memoryMB":512,"retries":2}"#))
    #expect(try JSONValue.parse(text).decode(Manifest.self) == sampleManifest)
  }

  @Test("optionals: missing and null both decode as nil; present values are kept")
  func optionals() throws {
    var object = try JSONValue(encoding: sampleManifest).objectValue!
    object["note"] = .null
    object["fallback"] = ["timeoutSeconds": 1, "memoryMB": 2, "retries": 3]
    let decoded = try JSONValue.object(object).decode(Manifest.self)
    #expect(decoded.note == nil)
    #expect(decoded.fallback == Limits(timeoutSeconds: 1, memoryMB: 2, retries: 3))
    #expect(try JSONValue(encoding: decoded)["fallback"]?["timeoutSeconds"] == .real(1))

    #expect(try JSONValue(encoding: [1, nil, 3] as [Int?]) == [1, nil, 3])
    #expect(try JSONValue.array([1, nil, 3]).decode([Int?].self) == [1, nil, 3])
    #expect(try JSONValue(encoding: Int?.none) == .null)
    #expect(try JSONValue.null.decode(String?.self) == nil)
  }

  @Test("arrays, dictionaries, sets, raw-value enums")
  func collections() throws {
    let dict = ["b": [1.5], "a": []]
    #expect(try JSONValue(encoding: dict).decode([String: [Double]].self) == dict)
    let byInt = [1: "one", 20: "twenty"]
    let encoded = try JSONValue(encoding: byInt)
    #expect(encoded["20"] == "twenty")
    #expect(try encoded.decode([Int: String].self) == byInt)
    #expect(try JSONValue(encoding: Set([3])).decode(Set<Int>.self) == [3])
    #expect(try JSONValue("write").decode(Access.self) == .write)
    #expect(decodingFailure(Access.self, "delete")?.kind == "dataCorrupted")
    #expect(try JSONValue(encoding: [[[Access.read]]]) == [[["read"]]])
  }

  @Test("Date with the default strategy matches Foundation's JSONEncoder")
  func dates() throws {
    let date = Date(timeIntervalSince1970: 1_700_000_000.25)
    let ours = try JSONValue(encoding: ["at": date])
    let foundation = try JSONValue.parse([UInt8](JSONEncoder().encode(["at": date])))
    #expect(ours.jsonEquals(foundation))
    #expect(try ours.decode([String: Date].self) == ["at": date])
    // An integer number of seconds decodes too.
    #expect(try JSONValue.integer(0).decode(Date.self) == Date(timeIntervalSinceReferenceDate: 0))
  }

  @Test("Data and other Foundation types use their own Codable form")
  func foundationTypes() throws {
    let data = Data([0, 255, 7])
    #expect(try JSONValue(encoding: data) == [0, 255, 7])
    #expect(try JSONValue(encoding: data).decode(Data.self) == data)
    let uuid = UUID()
    #expect(try JSONValue(encoding: uuid) == .string(uuid.uuidString))
  }
}

// MARK: - Numbers

@Suite("Codable numbers")
struct CodingNumberTests {
  @Test("integer types encode as integers, floating types as reals")
  func encodeKinds() throws {
    #expect(try JSONValue(encoding: 3) == .integer(3))
    #expect(try JSONValue(encoding: Int8(-128)) == .integer(-128))
    #expect(try JSONValue(encoding: UInt32.max) == .integer(Int64(UInt32.max)))
    #expect(try JSONValue(encoding: UInt64(Int64.max)) == .integer(.max))
    #expect(try JSONValue(encoding: Int64.min) == .integer(.min))
    #expect(try JSONValue(encoding: 3.0) == .real(3))
    #expect(try JSONValue(encoding: Float(0.5)) == .real(0.5))
    #expect(try JSONValue(encoding: [3.0]).serialized(.compact) == "[3.0]")
    #expect(try JSONValue(encoding: Int128(-5)) == .integer(-5))
  }

  @Test("integers beyond Int64 and non-finite reals do not encode")
  func encodeFailures() {
    #expect(encodingFailurePath(UInt64.max) == [])
    #expect(encodingFailurePath(["big": UInt64(Int64.max) + 1]) == ["big"])
    #expect(encodingFailurePath([[UInt.max]]) == ["Index 0", "Index 0"])
    #expect(encodingFailurePath(["x": Double.nan]) == ["x"])
    #expect(encodingFailurePath([Float.infinity]) == ["Index 0"])
    #expect(encodingFailurePath(UInt128.max) == [])
  }

  @Test("integer decoding checks the range of the target type")
  func integerRanges() throws {
    #expect(try JSONValue.integer(127).decode(Int8.self) == 127)
    #expect(decodingFailure(Int8.self, 128)?.kind == "dataCorrupted")
    #expect(decodingFailure(UInt.self, -1)?.kind == "dataCorrupted")
    #expect(decodingFailure(UInt16.self, ["n": 70_000])?.kind == "typeMismatch")
    #expect(decodingFailure([String: UInt16].self, ["n": 70_000])?.path == ["n"])
    #expect(try JSONValue.integer(.max).decode(UInt64.self) == UInt64(Int64.max))
    #expect(try JSONValue.integer(.min).decode(Int64.self) == .min)
    #expect(try JSONValue.integer(.min).decode(Int128.self) == Int128(Int64.min))
  }

  @Test("a real with no fraction decodes as an integer; one with a fraction does not")
  func realsAsIntegers() throws {
    #expect(try JSONValue.real(3).decode(Int.self) == 3)
    #expect(try JSONValue.real(-0.0).decode(Int.self) == 0)
    #expect(try JSONValue.real(1.8e19).decode(UInt64.self) == 18_000_000_000_000_000_000)
    #expect(decodingFailure(Int.self, 3.5)?.kind == "dataCorrupted")
    #expect(decodingFailure(Int64.self, 1e19)?.kind == "dataCorrupted")
    #expect(decodingFailure(Int.self, .real(.nan))?.kind == "dataCorrupted")
    #expect(decodingFailure(Int.self, .real(.infinity))?.kind == "dataCorrupted")
  }

  @Test("integers decode as Double and Float; too large for Float fails")
  func integersAsReals() throws {
    #expect(try JSONValue.integer(3).decode(Double.self) == 3)
    #expect(try JSONValue.integer(-7).decode(Float.self) == -7)
    #expect(try JSONValue.real(0.1).decode(Float.self) == Float(0.1))
    #expect(decodingFailure(Float.self, 1e300)?.kind == "dataCorrupted")
  }

  @Test("strings, booleans and numbers are not converted into one another")
  func noCoercion() {
    #expect(decodingFailure(Int.self, "3")?.kind == "typeMismatch")
    #expect(decodingFailure(String.self, 3)?.kind == "typeMismatch")
    #expect(decodingFailure(Bool.self, 1)?.kind == "typeMismatch")
    #expect(decodingFailure(Int.self, true)?.kind == "typeMismatch")
    #expect(decodingFailure(Double.self, "1.5")?.kind == "typeMismatch")
  }
}

// MARK: - Errors

struct Item: Codable, Equatable {
  var name: String
  var count: Int
}

struct Order: Codable, Equatable {
  var id: String
  var items: [Item]
}

@Suite("Decoding errors carry their coding path")
struct DecodingErrorTests {
  @Test("typeMismatch")
  func typeMismatch() throws {
    let value: JSONValue = [
      "id": "o1", "items": [["name": "a", "count": 1], ["name": 2, "count": 1]],
    ]
    let failure = try #require(decodingFailure(Order.self, value))
    #expect(failure.kind == "typeMismatch")
    #expect(failure.path == ["items", "Index 1", "name"])
    #expect(
      decodingFailure(Order.self, ["id": "o1", "items": ["name": "a"]])! == (
        "typeMismatch", ["items"]
      ))
    #expect(decodingFailure(Order.self, [1])! == ("typeMismatch", []))
  }

  @Test("keyNotFound")
  func keyNotFound() {
    let value: JSONValue = ["id": "o1", "items": [["name": "a"]]]
    #expect(decodingFailure(Order.self, value)! == ("keyNotFound", ["items", "Index 0", "count"]))
  }

  @Test("valueNotFound for null and for running off the end of an array")
  func valueNotFound() {
    let value: JSONValue = ["id": .null, "items": []]
    #expect(decodingFailure(Order.self, value)! == ("valueNotFound", ["id"]))
    #expect(decodingFailure(Pair.self, [1])! == ("valueNotFound", ["Index 1"]))
    #expect(decodingFailure(Item.self, .null)! == ("valueNotFound", []))
  }

  @Test("dataCorrupted for an out-of-range integer deep inside")
  func dataCorrupted() {
    let value: JSONValue = ["id": "o1", "items": [["name": "a", "count": 1.5]]]
    #expect(
      decodingFailure(Order.self, value)! == ("dataCorrupted", ["items", "Index 0", "count"]))
  }

  @Test("the error message names what was found")
  func message() throws {
    do {
      _ = try JSONValue.string("x").decode(Int.self)
      Issue.record("decoded")
    } catch DecodingError.typeMismatch(_, let context) {
      #expect(context.debugDescription.contains("a string"))
    }
  }
}

// MARK: - JSONValue inside other coders

struct Call: Codable, Equatable {
  var tool: String
  var arguments: JSONValue
  var result: JSONValue?
}

let callArguments: JSONValue = [
  "path": "/tmp/x", "count": 3, "ratio": 3.0, "big": .integer(.max),
  "deep": ["list": [true, false, nil, -1.5e-7]],
  "empty": [:], "none": [],
]

@Suite("JSONValue as a Codable value")
struct JSONValueCodableTests {
  @Test("through JSONValueEncoder/Decoder it passes unchanged, integer and real kept apart")
  func ours() throws {
    let call = Call(tool: "read", arguments: callArguments, result: nil)
    let value = try JSONValue(encoding: call)
    #expect(value["arguments"] == callArguments)
    #expect(value["arguments"]?["ratio"] == .real(3))
    #expect(try value.decode(Call.self) == call)
    #expect(try JSONValue(encoding: callArguments) == callArguments)
    #expect(try callArguments.decode(JSONValue.self) == callArguments)
    #expect(try JSONValue(encoding: [callArguments]) == [callArguments])
    #expect(try JSONValue.array([callArguments]).decode([JSONValue].self) == [callArguments])
    #expect(
      try JSONValue(encoding: ["k": callArguments]).decode([String: JSONValue].self) == [
        "k": callArguments
      ])
    let withNull = try JSONValue(encoding: Call(tool: "t", arguments: nil, result: .null))
    #expect(withNull == ["tool": "t", "arguments": nil, "result": nil])
    #expect(try withNull.decode(Call.self).arguments == .null)
  }

  @Test("through Foundation's JSONEncoder and JSONDecoder it keeps its meaning")
  func foundation() throws {
    let call = Call(tool: "read", arguments: callArguments, result: "ok")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(call)
    let text = String(decoding: data, as: UTF8.self)
    #expect(text.contains(#""big":9223372036854775807"#))

    let back = try JSONDecoder().decode(Call.self, from: data)
    #expect(back.tool == "read")
    #expect(back.result == "ok")
    #expect(back.arguments.jsonEquals(callArguments), "\(back.arguments)")
    #expect(back.arguments["big"] == .integer(.max))
    #expect(back.arguments["count"] == .integer(3))
    #expect(back.arguments["deep"]?["list"] == [true, false, nil, -1.5e-7])
    #expect(back.arguments["empty"] == [:])
    #expect(back.arguments["none"] == [])

    // Foundation's text parses with ours to the same JSON.
    #expect(try JSONValue.parse([UInt8](data))["arguments"]?.jsonEquals(callArguments) == true)
  }

  @Test("from Foundation's decoder: booleans stay booleans, large numbers become reals")
  func foundationScalars() throws {
    let text = #"[true, 0, 1, -5, 2.5, 1e300, 18446744073709551615, "s", null, {"k": [{}]}]"#
    let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    #expect(
      value == [
        true, 0, 1, -5, 2.5, 1e300, .real(1.844_674_407_370_955_2e19), "s", nil, ["k": [[:]]],
      ])
  }

  @Test("non-finite reals go to foreign encoders as null")
  func foreignNonFinite() throws {
    let data = try JSONEncoder().encode(["x": JSONValue.real(.nan)])
    #expect(String(decoding: data, as: UTF8.self) == #"{"x":null}"#)
  }

  @Test("a JSONValue in a property list round-trips too")
  func propertyList() throws {
    let value: JSONValue = ["a": [1, "two", true], "b": ["c": 2.5]]
    let data = try PropertyListEncoder().encode(["v": value])
    let back = try PropertyListDecoder().decode([String: JSONValue].self, from: data)
    #expect(back["v"]?.jsonEquals(value) == true, "\(String(describing: back["v"]))")
  }
}
